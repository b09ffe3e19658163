"""Query results in LightRAG's response shapes, with kgrag's fields alongside.

- :func:`answer_view`: ``{response, references, response_time,
  llm_generated}`` plus ``coverage``, ``cost``, ``mode``, ``extractive``,
  ``fallback_reason``, ``retrieval_note``, ``invalid_citations``, ``cached``;
- :func:`reference_views`: one entry per reference number, LightRAG's
  ``reference_id`` and ``file_path`` (and ``content``, a list holding the
  span's text, with ``include_chunk_content``) plus kgrag's ``kind``,
  ``name``, ``doc_id``, ``chunk_id``, ``pages``, ``section``, ``start``,
  ``end``, ``cited``;
- :func:`data_view`: ``{status, message, data: {entities, relationships,
  chunks, references, paths}, metadata: {query_mode, keywords,
  processing_info, ...}}``; entities and relations also carry LightRAG's
  ``source_id`` and ``file_path`` (``<SEP>``-joined) and their
  ``reference_id``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NotRequired, TypedDict, TypeVar

from kgrag.llm.ledger import QueryCostRow
from kgrag.retrieval.param import QueryResult
from kgrag.retrieval.shapes import (
    ChunkData,
    CoverageData,
    EntityData,
    PathData,
    QueryData,
    ReferenceData,
    RelationData,
)
from kgrag.server.views import JSONObject
from kgrag.types import SEP

_DATA_KEYS = {
    "status",
    "question",
    "mode",
    "keywords",
    "entities",
    "relations",
    "paths",
    "chunks",
    "references",
}
Item = TypeVar("Item", EntityData, RelationData)


class OutcomeFields(TypedDict):
    """kgrag's fields of an answer, in ``/query`` and the stream's last line."""

    llm_generated: bool
    coverage: list[CoverageData]
    cost: QueryCostRow
    mode: str
    extractive: bool
    fallback_reason: str | None
    retrieval_note: str | None
    invalid_citations: list[int]
    cached: bool


class AnswerView(OutcomeFields):
    """``POST /query``'s answer (``references`` left out of a stream's one line when off)."""

    response: str
    references: NotRequired[list[JSONObject] | None]
    response_time: float


class DataBody(TypedDict):
    entities: list[JSONObject]
    relationships: list[JSONObject]
    chunks: list[ChunkData]
    references: list[ReferenceData] | list[JSONObject]
    paths: list[PathData]


class DataView(TypedDict):
    """``POST /query/data``'s answer."""

    status: str
    message: str
    data: DataBody
    metadata: JSONObject


def reference_views(
    refs: Sequence[Mapping[str, object]], include_content: bool
) -> list[JSONObject]:
    out = []
    for ref in refs:
        item = {k: v for k, v in ref.items() if k not in ("text", "sources", "chunks")}
        item["reference_id"] = str(ref.get("reference_id", ""))
        item["file_path"] = ref.get("file_path") or ""
        if include_content:
            item["content"] = [ref["text"]] if ref.get("text") else []
        out.append(item)
    return out


def llm_generated(result: QueryResult) -> bool:
    """Whether a chat model wrote the text (not a context, prompt, quote or no-context reply)."""
    return result.kind == "answer" and not result.extractive and not result.no_context


def outcome_fields(result: QueryResult) -> OutcomeFields:
    """kgrag's fields of an answer: what it covered, cost, and how it was made."""
    return {
        "llm_generated": llm_generated(result),
        "coverage": result.coverage,
        "cost": result.cost.as_dict(),
        "mode": result.mode,
        "extractive": result.extractive,
        "fallback_reason": result.fallback_reason,
        "retrieval_note": result.retrieval_note,
        "invalid_citations": result.invalid_citations,
        "cached": result.cached,
    }


def answer_view(result: QueryResult, include: bool, content: bool, seconds: float) -> AnswerView:
    """``POST /query``'s answer (``include``: references; ``content``: their text)."""
    refs = reference_views(result.references, content) if include else None
    return {
        "response": result.text,
        "references": refs,
        "response_time": round(seconds, 4),
        **outcome_fields(result),
    }


def _numbers(refs: Sequence[ReferenceData], kind: str) -> dict[str, str]:
    return {str(r.get("name")): str(r["reference_id"]) for r in refs if r.get("kind") == kind}


def _with_lightrag_fields(
    items: Sequence[Item], numbers: dict[str, str], key: Callable[[Item], str]
) -> list[JSONObject]:
    out: list[JSONObject] = []
    for item in items:
        extra = {
            "source_id": SEP.join(item.get("source_ids") or []),
            "file_path": SEP.join(item.get("file_paths") or []),
            "reference_id": numbers.get(key(item), ""),
        }
        out.append({**item, **extra})
    return out


def _entity_key(entity: EntityData) -> str:
    return str(entity.get("entity_name"))


def _relation_key(relation: RelationData) -> str:
    return f"{relation.get('src_id')} <-> {relation.get('tgt_id')}"


def data_view(data: QueryData, include_content: bool = False) -> DataView:
    """``POST /query/data``'s answer from :meth:`KGRag.query_data`'s record.

    The references leave out their span's text unless ``include_content``:
    the chunks already carry it, and it made an answer five times the size.
    """
    refs = data.get("references", [])
    entities = _with_lightrag_fields(
        data.get("entities", []), _numbers(refs, "entity"), _entity_key
    )
    relations = _with_lightrag_fields(
        data.get("relations", []), _numbers(refs, "relation"), _relation_key
    )
    keywords = data.get("keywords", {})
    truncated = data.get("truncated", {})
    info = {
        "total_entities_found": len(entities) + truncated.get("entities", 0),
        "total_relations_found": len(relations) + truncated.get("relations", 0),
        "entities_after_truncation": len(entities),
        "relations_after_truncation": len(relations),
        "final_chunks_count": len(data.get("chunks", [])),
    }
    metadata: JSONObject = {
        "query_mode": data.get("mode"),
        "keywords": {
            "high_level": keywords.get("high_level", []),
            "low_level": keywords.get("low_level", []),
        },
        "processing_info": info,
        **{k: v for k, v in data.items() if k not in _DATA_KEYS},
    }
    body: DataBody = {
        "entities": entities,
        "relationships": relations,
        "chunks": data.get("chunks", []),
        "references": refs if include_content else [_without_text(r) for r in refs],
        "paths": data.get("paths", []),
    }
    status = data.get("status", "success")
    message = "Query executed successfully" if status == "success" else f"Query status: {status}"
    return {"status": status, "message": message, "data": body, "metadata": metadata}


def _without_text(ref: ReferenceData) -> JSONObject:
    return {k: v for k, v in ref.items() if k != "text"}
