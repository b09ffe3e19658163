"""A kgrag JSON export (``kgrag export --format json``) read back into an import plan.

The export carries, per chunk, its text and its stored facts (rows and
owners with their sort keys and positions), and per document its
identity (id, source, file path, content hash, flags, metadata). That is
the primary record of an index: committing it rebuilds the same graph,
and the summaries in the export are seeded so that none is asked for
again. The curation records (merges, aliases, manual edits) are committed
with the documents, so the copy plans through them as the original did.
Documents that were not processed (failed, pending) had no chunks
in the graph and are left out, with a warning.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kgrag.maintenance.export import FORMAT
from kgrag.maintenance.importing.model import (
    ImportedChunk,
    ImportedDoc,
    ImportFormatError,
    ImportPlan,
)
from kgrag.storage.base import edge_key

Owned = tuple[int, Mapping[str, Any], list[Any]]  # (position, chunk, owner entry)


def _owned(chunks: list[Mapping[str, Any]]) -> dict[str, list[Owned]]:
    """Per document, its chunks as (position, chunk, owner entry)."""
    out: dict[str, list[Owned]] = {}
    for chunk in chunks:
        facts = chunk.get("facts")
        if not isinstance(facts, Mapping) or not isinstance(chunk.get("content"), str):
            raise ImportFormatError(
                f"chunk {chunk.get('id')!r} has no text or facts: export it with this "
                "version of kgrag (`kgrag export --format json`)"
            )
        for doc, entry in facts.get("owners", {}).items():
            out.setdefault(doc, []).append((int(entry[1]), chunk, list(entry)))
    return out


def _chunk(chunk: Mapping[str, Any], entry: list[Any]) -> ImportedChunk:
    facts = chunk["facts"]
    return ImportedChunk(
        chunk["content"],
        entities=[list(r) for r in facts.get("entities", [])],
        relations=[list(r) for r in facts.get("relations", [])],
        extractor=facts.get("extractor", "llm"),
        tokens=int(chunk.get("tokens") or 0),
        location=dict(entry[3]) if len(entry) > 3 and entry[3] else {},
    )


def _seeds(data: Mapping[str, Any], plan: ImportPlan) -> None:
    """The export's summaries, to keep (see :mod:`kgrag.maintenance.importing.commit`)."""
    for e in data.get("entities", []):
        if e.get("fragments_digest") and e.get("description"):
            plan.node_seeds[e["name"]] = {"description": e["description"]}
    for r in data.get("relations", []):
        if r.get("fragments_digest") and r.get("description"):
            plan.edge_seeds[edge_key(r["src"], r["tgt"])] = {"description": r["description"]}


def read_export(data: object) -> ImportPlan:
    """The plan that rebuilds the exported index."""
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        raise ImportFormatError(f'not a kgrag export (no "format": "{FORMAT}")')
    owned = _owned(list(data.get("chunks", [])))
    plan = ImportPlan("kgrag")
    for doc in data.get("documents", []):
        rows = sorted(owned.get(doc["id"], []), key=lambda t: t[0])
        if doc.get("status") != "processed":
            plan.warnings.append(f"document {doc['id']} was {doc.get('status')}: left out")
            continue
        plan.docs.append(
            ImportedDoc(
                doc["id"],
                doc.get("file_path") or "unknown_source",
                [_chunk(chunk, entry) for _, chunk, entry in rows],
                source=doc.get("source"),
                content_hash=doc.get("content_hash") or None,
                metadata=dict(doc.get("metadata") or {}),
                disabled=bool(doc.get("disabled")),
                sort_key=str(rows[0][2][0]) if rows else None,
            )
        )
    _seeds(data, plan)
    if isinstance(data.get("curation"), Mapping):
        plan.curation = dict(data["curation"])
    return plan
