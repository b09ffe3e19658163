"""The context handed to the model: sections, token budgets, references.

Each entity, relation and chunk becomes one JSON line. Sections are
filled in rank order until their budget is spent (a prefix: a lower-ranked
item never displaces a higher one):

- entities: ``min(max_entity_tokens, room)``
- relations: ``min(max_relation_tokens, room - entities)``
- chunks: ``room - entities - relations``, where ``room`` is
  ``max_total_tokens`` minus the prompt without context (instructions,
  conversation, question), the section headers and a 200-token buffer.

Every line carries its item's reference number (``"reference_id"``, see
:mod:`kgrag.retrieval.context.numbering`); a chunk's cost includes its line in
the Reference Document List (its file, page and section).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from kgrag.retrieval.context import headers as H
from kgrag.retrieval.records import ChunkHit, EntityHit, RelationHit, description_text
from kgrag.retrieval.reference import location_text
from kgrag.retrieval.trace import Trace, relation_id

if TYPE_CHECKING:
    from kgrag.llm.tokenizer import Tokenizer

T = TypeVar("T")

BUFFER_TOKENS = 200


def entity_line(e: EntityHit, reference_id: str = "0") -> str:
    return json.dumps(
        {
            "reference_id": reference_id,
            "entity": e.name,
            "type": e.data.get("entity_type", "UNKNOWN"),
            "description": description_text(e.data),
        },
        ensure_ascii=False,
    )


def relation_line(r: RelationHit, reference_id: str = "0") -> str:
    return json.dumps(
        {
            "reference_id": reference_id,
            "entity1": r.src,
            "entity2": r.tgt,
            "keywords": r.data.get("keywords", ""),
            "description": description_text(r.data),
        },
        ensure_ascii=False,
    )


def chunk_line(c: ChunkHit, reference_id: str) -> str:
    return json.dumps({"reference_id": reference_id, "content": c.content}, ensure_ascii=False)


# --- references with page and section (structure-aware ingest) ---
def reference_line(reference_id: str, file_path: str, where: str = "") -> str:
    """``[1] /abs/path/book.pdf p. 12, §3.2 Licensing`` (``where`` from :func:`location_text`)."""
    return f"[{reference_id}] {file_path}" + (f" {where}" if where else "")


def reference_key(c: ChunkHit) -> tuple[str, str]:
    """A chunk's line in the Reference Document List: its file, and the page / section when known."""
    return c.file_path, location_text(c.location)


@dataclass(slots=True)
class Fitted:
    """The items of one section that fit, their lines and their token cost."""

    items: list[Any] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    tokens: int = 0
    dropped: int = 0


@dataclass(slots=True)
class SectionBudget:
    """A token budget and the words the trace uses when it runs out."""

    tokens: int
    reason: str


def fit(
    items: Sequence[T],
    to_line: Callable[[T], str],
    budget: SectionBudget,
    tokenizer: Tokenizer,
    trace: Trace,
    kind: str,
    name: Callable[[T], str],
    extra_cost: Callable[[T, list[T]], int] | None = None,
) -> Fitted:
    """The longest prefix of ``items`` whose lines fit ``budget`` (+1 token a line break).

    ``extra_cost(item, kept_items)`` adds tokens an item brings elsewhere.
    """
    out = Fitted()
    for i, item in enumerate(items):
        line = to_line(item)
        cost = tokenizer.count(line) + 1 + (extra_cost(item, out.items) if extra_cost else 0)
        if out.tokens + cost > budget.tokens:
            out.dropped = len(items) - i
            for rest in items[i:]:
                trace.drop(
                    "truncation", kind, name(rest), budget.reason, getattr(rest, "score", None)
                )
            break
        out.items.append(item)
        out.lines.append(line)
        out.tokens += cost
    return out


def _section(header: str, lines: list[str], lang: str = "json") -> str:
    return f"{header}\n{H.fenced(chr(10).join(lines), lang)}"


def render_context(
    entity_lines: list[str],
    relation_lines: list[str],
    chunk_lines: list[str],
    references: Sequence[Mapping[str, object]],
) -> str:
    """The context text; empty sections are left out.

    The Reference Document List names the chunks' references (entries of
    ``references`` whose ``kind`` is ``chunk`` or unset).
    """
    parts = []
    if entity_lines:
        parts.append(_section(H.ENTITIES_HEADER, entity_lines))
    if relation_lines:
        parts.append(_section(H.RELATIONS_HEADER, relation_lines))
    if chunk_lines:
        parts.append(_section(H.CHUNKS_HEADER, chunk_lines))
    listed = [r for r in references if r.get("kind", "chunk") == "chunk"]
    if listed:
        ref_lines = [
            reference_line(str(r["reference_id"]), str(r["file_path"]), str(r.get("location", "")))
            for r in listed
        ]
        parts.append(_section(H.REFERENCES_HEADER, ref_lines, ""))
    return "\n\n".join(parts)


def skeleton_tokens(tokenizer: Tokenizer) -> int:
    """Tokens of the section headers and fences with every section present."""
    return (
        tokenizer.count(
            render_context(["x"], ["x"], ["x"], [{"reference_id": "1", "file_path": "x"}])
        )
        - 4
    )


def entity_name(e: EntityHit) -> str:
    return e.name


def relation_name(r: RelationHit) -> str:
    return relation_id(r.src, r.tgt)


def chunk_name(c: ChunkHit) -> str:
    return c.id


def fit_chunks(
    chunks: Sequence[ChunkHit], budget: SectionBudget, tokenizer: Tokenizer, trace: Trace
) -> Fitted:
    """Chunks that fit ``budget``, each charged for its line in the Reference Document List."""

    def reference_cost(chunk: ChunkHit, kept: list[ChunkHit]) -> int:
        return tokenizer.count(reference_line("999", *reference_key(chunk))) + 1

    # Reference ids of up to three digits tokenise alike, so "0" stands in for the real one.
    return fit(
        chunks,
        lambda c: chunk_line(c, "0"),
        budget,
        tokenizer,
        trace,
        "chunk",
        chunk_name,
        extra_cost=reference_cost,
    )
