"""The structured result of :meth:`QueryEngine.query_data`."""

from __future__ import annotations

from kgrag.retrieval.assemble import Assembly
from kgrag.retrieval.context.paths import path_data
from kgrag.retrieval.param import QueryParam
from kgrag.retrieval.records import ChunkHit, EntityHit, RelationHit, as_list, description_text
from kgrag.retrieval.shapes import ChunkData, EntityData, QueryData, RelationData


def _score(value: float | None) -> float | None:
    return None if value is None else round(float(value), 6)


def entity_data(e: EntityHit) -> EntityData:
    return {
        "entity_name": e.name,
        "entity_type": e.data.get("entity_type", "UNKNOWN"),
        "description": description_text(e.data),
        "source_ids": as_list(e.data.get("source_ids")),
        "file_paths": as_list(e.data.get("file_paths")),
        "degree": e.degree,
        "score": _score(e.score),
        "route": e.route,
    }


def relation_data(r: RelationHit) -> RelationData:
    return {
        "src_id": r.src,
        "tgt_id": r.tgt,
        "keywords": r.data.get("keywords", ""),
        "description": description_text(r.data),
        "weight": r.weight,
        "source_ids": as_list(r.data.get("source_ids")),
        "file_paths": as_list(r.data.get("file_paths")),
        "degree": r.degree,
        "score": _score(r.score),
        "route": r.route,
    }


def chunk_data(c: ChunkHit, reference_id: str) -> ChunkData:
    return {
        "chunk_id": c.id,
        "content": c.content,
        "file_path": c.file_path,
        "doc_id": c.doc_id,
        "reference_id": reference_id,
        "score": _score(c.score),
        "route": c.route,
        "location": dict(c.location),
    }  # section, pages, offsets (block chunker)


def assembly_data(question: str, param: QueryParam, asm: Assembly, rerank: bool) -> QueryData:
    """Everything retrieval produced for ``question``, as plain JSON-ready data."""
    return {
        "status": "success" if asm.status == "ok" else asm.status,
        "question": question,
        "mode": param.mode,
        "keywords": asm.keywords.to_dict(),
        "entities": [entity_data(e) for e in asm.entities],
        "relations": [relation_data(r) for r in asm.relations],
        "paths": [path_data(p) for p in asm.paths],
        "chunks": [chunk_data(c, ref) for c, ref in zip(asm.chunks, asm.chunk_refs, strict=False)],
        "references": list(asm.references),
        "tokens": dict(asm.tokens),
        "truncated": dict(asm.truncated),
        "context_chars": len(asm.context),
        "reranked": bool(rerank and param.enable_rerank),
        "filter": asm.filter,
        "conditions": asm.conditions.to_dict(),  # constraints, verdicts, coverage, note
        "retrieval_note": asm.note,  # set when the embedder failed: BM25 alone was searched
    }
