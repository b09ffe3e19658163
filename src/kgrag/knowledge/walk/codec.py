"""A :class:`~kgrag.knowledge.walk.graph.WalkGraph` as a JSON value, and back.

Names are JSON lists; arrays are their little-endian bytes in base64
(indexes as int32, similarities float32, weights float64), so loading
100k entities is a few decodes rather than a million JSON numbers.
``FORMAT`` changes whenever the layout does; a value of another format
decodes to ``None`` (the caller builds the graph afresh).
"""

from __future__ import annotations

import base64

import numpy as np

from kgrag.knowledge.walk.graph import WalkGraph
from kgrag.storage.layout.rows import WalkSnapshotRow

FORMAT = 1
# the arrays' stored types: edge pairs and entity pairs as int32, similarities float32,
# weights float64 (little-endian)
EC, SIM, EE, WEIGHT = "<i4", "<f4", "<i4", "<f8"


def _text(array: np.ndarray, dtype: str) -> str:
    return base64.b64encode(np.ascontiguousarray(array, dtype=dtype).tobytes()).decode("ascii")


def _array(text: str, dtype: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=dtype)


def encode(graph: WalkGraph) -> WalkSnapshotRow:
    """The JSON value of ``graph``."""
    return {
        "format": FORMAT,
        "version": graph.version,
        "entities": graph.entities,
        "chunks": graph.chunks,
        "keys": graph.keys,
        "alt": graph.alt,
        "ec": _text(graph.ec, EC),
        "sim": _text(graph.sim, SIM),
        "ee": _text(graph.ee, EE),
        "weight": _text(graph.weight, WEIGHT),
    }


def decode(value: WalkSnapshotRow | None) -> WalkGraph | None:
    """The graph ``value`` holds; ``None`` if it is missing or of another format."""
    if not value or value.get("format") != FORMAT:
        return None
    return WalkGraph(
        int(value["version"]),
        value["entities"],
        value["chunks"],
        value["keys"],
        value["alt"],
        _array(value["ec"], EC).astype(np.int64).reshape(-1, 2),
        _array(value["sim"], SIM).astype(np.float32),
        _array(value["ee"], EE).astype(np.int64).reshape(-1, 2),
        _array(value["weight"], WEIGHT).astype(np.float64),
    )
