"""The whole graph as one canonical JSON document.

Entities sorted by name, relations by their canonical pair, chunks by id,
documents by id; every object's keys sorted. Two equal graphs export to
byte-identical files, apart from timestamps (``timestamps=False`` drops
``created_at`` / ``updated_at``). The tests compare indexes this way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, cast

from kgrag.knowledge.curation import export_records
from kgrag.maintenance.export_records import (
    ExportChunk,
    ExportData,
    ExportDocument,
    ExportEntity,
    ExportRelation,
)
from kgrag.storage.layout import CHUNKS, FACTS
from kgrag.types import DocRecord, DocStatus

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

FORMAT = "kgrag-graph"
VERSION = 1
TIMESTAMPS = ("created_at", "updated_at")
_CHUNK_FIELDS = ("doc_id", "doc_ids", "file_path", "location", "order", "tokens")


def _clean(data: Mapping[str, object], timestamps: bool) -> dict[str, object]:
    return {k: v for k, v in data.items() if timestamps or k not in TIMESTAMPS}


def _entity(name: str, node: Mapping[str, object], timestamps: bool) -> ExportEntity:
    return cast("ExportEntity", {"name": name, **_clean(node, timestamps)})


def _relation(
    pair: tuple[str, str], edge: Mapping[str, object], timestamps: bool
) -> ExportRelation:
    return cast("ExportRelation", _clean(edge, timestamps) | {"src": pair[0], "tgt": pair[1]})


def _chunk(chunk_id: str, row: Mapping[str, object], fact: object) -> ExportChunk:
    fields = {k: row.get(k) for k in _CHUNK_FIELDS}
    return cast(
        "ExportChunk", {"id": chunk_id, **fields} | {"content": row.get("content"), "facts": fact}
    )


def _document(r: DocRecord, timestamps: bool) -> ExportDocument:
    doc: ExportDocument = {
        "id": r.id,
        "source": r.source,
        "file_path": r.file_path,
        "content_hash": r.content_hash,
        "status": r.status.value,
        "disabled": r.disabled,
        "metadata": r.metadata,
    }
    if timestamps:
        doc["updated_at"] = r.updated_at
    return doc


async def export_graph(storage: Storage, *, timestamps: bool = True) -> ExportData:
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
        "entities": [_entity(n, nodes[n], timestamps) for n in names],
        "relations": [_relation(p, edges[p], timestamps) for p in pairs],
        "chunks": [
            _chunk(c, row, fact)
            for c, row, fact in zip(chunk_ids, rows, facts, strict=False)
            if row is not None
        ],
        "curation": await export_records(storage, timestamps=timestamps),
        "documents": sorted((_document(r, timestamps) for r in records), key=lambda d: d["id"]),
    }


def dumps(data: ExportData) -> str:
    """The canonical text of an export."""
    return json.dumps(data, sort_keys=True, ensure_ascii=False, indent=1) + "\n"
