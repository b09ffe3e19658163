"""The whole graph as one canonical JSON document.

Entities sorted by name, relations by their canonical pair, chunks by id,
documents by id; every object's keys sorted. Two equal graphs export to
byte-identical files, apart from timestamps (``timestamps=False`` drops
``created_at`` / ``updated_at``). The tests compare indexes this way.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from kgrag.knowledge.curation import export_records
from kgrag.indexing.facts import CHUNKS, FACTS
from kgrag.types import DocStatus

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

FORMAT = "kgrag-graph"
VERSION = 1
TIMESTAMPS = ("created_at", "updated_at")
_CHUNK_FIELDS = ("doc_id", "doc_ids", "file_path", "location", "order", "tokens")


def _clean(data: dict[str, Any], timestamps: bool) -> dict[str, Any]:
    return {k: v for k, v in data.items() if timestamps or k not in TIMESTAMPS}


async def export_graph(storage: Storage, *, timestamps: bool = True) -> dict[str, Any]:
    """The graph, its chunks' sources and the live documents as plain data."""
    g = storage.graph
    names = sorted(await g.all_node_names())
    nodes = await g.get_nodes(names)
    pairs = sorted((a, b) for a, b, _ in await g.all_edges())
    edges = await g.get_edges(pairs)
    chunk_ids = sorted(await storage.kv(CHUNKS).keys())
    rows = await storage.kv(CHUNKS).get_many(chunk_ids)
    facts = await storage.kv(FACTS).get_many(chunk_ids)  # what `kgrag import --from kgrag` reads
    records = await storage.doc_status.by_status(*DocStatus)
    return {
        "format": FORMAT,
        "version": VERSION,
        "entities": [{"name": n, **_clean(nodes[n], timestamps)} for n in names],
        "relations": [_clean(edges[p], timestamps) | {"src": p[0], "tgt": p[1]} for p in pairs],
        "chunks": [
            {"id": c, **{k: row.get(k) for k in _CHUNK_FIELDS}}
            | {"content": row.get("content"), "facts": fact}
            for c, row, fact in zip(chunk_ids, rows, facts, strict=False)
            if row is not None
        ],
        "curation": await export_records(storage, timestamps=timestamps),
        "documents": sorted(
            (
                {
                    "id": r.id,
                    "source": r.source,
                    "file_path": r.file_path,
                    "content_hash": r.content_hash,
                    "status": r.status.value,
                    "disabled": r.disabled,
                    "metadata": r.metadata,
                    **({"updated_at": r.updated_at} if timestamps else {}),
                }
                for r in records
            ),
            key=lambda d: d["id"],
        ),
    }


def dumps(data: dict[str, Any]) -> str:
    """The canonical text of an export."""
    return json.dumps(data, sort_keys=True, ensure_ascii=False, indent=1) + "\n"
