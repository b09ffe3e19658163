"""Comparing exports whose documents may carry different ids for the same source.

A moved file keeps its first path's id, and a new file at a path another
document moved away from gets the next free id; a fresh index of the same
files gives every document its usual id. :func:`by_source` renames every
document id of an export to a label of its source (ids of raw texts, known
by their content, stay), so two exports compare equal exactly when their
graphs, chunks and documents agree and each points at the same sources.
"""

from __future__ import annotations

import json
from typing import Any

from kgrag.maintenance.export import dumps


def by_source(text: str) -> str:
    """The export ``text`` with each sourced document's id replaced by ``doc:<source>``."""
    data = json.loads(text)
    labels = {d["id"]: f"doc:{d['source']}" for d in data["documents"] if d.get("source")}
    renamed = _rename(data, labels)
    renamed["documents"].sort(key=lambda d: d["id"])
    for chunk in renamed["chunks"]:
        chunk["doc_ids"] = sorted(chunk.get("doc_ids") or [])
    return dumps(renamed)


def ids_by_source(text: str) -> dict[str, str]:
    """Source -> document id, for the sourced documents of an export."""
    return {d["source"]: d["id"] for d in json.loads(text)["documents"] if d.get("source")}


def _rename(value: Any, labels: dict[str, str]) -> Any:
    if isinstance(value, str):
        return labels.get(value, value)
    if isinstance(value, list):
        return [_rename(v, labels) for v in value]
    if isinstance(value, dict):
        return {labels.get(k, k): _rename(v, labels) for k, v in value.items()}
    return value
