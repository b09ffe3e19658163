"""A :class:`~kgrag.knowledge.walk.graph.WalkGraph` as a JSON value, and back.

Names are JSON lists; arrays are their little-endian bytes in base64
(indexes as int32, similarities float32, weights float64), so loading
100k entities is a few decodes rather than a million JSON numbers.
``FORMAT`` changes whenever the layout does; a value of another format
decodes to ``None`` (the caller builds the graph afresh).
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from kgrag.knowledge.walk.graph import WalkGraph

FORMAT = 1
_ARRAYS = {"ec": "<i4", "sim": "<f4", "ee": "<i4", "weight": "<f8"}


def encode(graph: WalkGraph) -> dict[str, Any]:
    """The JSON value of ``graph``."""
    out: dict[str, Any] = {
        "format": FORMAT,
        "version": graph.version,
        "entities": graph.entities,
        "chunks": graph.chunks,
        "keys": graph.keys,
        "alt": graph.alt,
    }
    for name, dtype in _ARRAYS.items():
        raw = np.ascontiguousarray(getattr(graph, name), dtype=dtype).tobytes()
        out[name] = base64.b64encode(raw).decode("ascii")
    return out


def decode(value: dict[str, Any] | None) -> WalkGraph | None:
    """The graph ``value`` holds; ``None`` if it is missing or of another format."""
    if not value or value.get("format") != FORMAT:
        return None
    arrays = {
        name: np.frombuffer(base64.b64decode(value[name]), dtype=dtype)
        for name, dtype in _ARRAYS.items()
    }
    return WalkGraph(
        int(value["version"]),
        value["entities"],
        value["chunks"],
        value["keys"],
        value["alt"],
        arrays["ec"].astype(np.int64).reshape(-1, 2),
        arrays["sim"].astype(np.float32),
        arrays["ee"].astype(np.int64).reshape(-1, 2),
        arrays["weight"].astype(np.float64),
    )
