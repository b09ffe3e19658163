"""The numbered context: every item's line with its number, and the references behind them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kgrag.retrieval.context.numbering import ItemNumbers
from kgrag.retrieval.context.references import item_references
from kgrag.retrieval.context.sections import chunk_line, entity_line, relation_line, render_context
from kgrag.retrieval.records import ChunkHit, EntityHit, RelationHit
from kgrag.retrieval.shapes import ReferenceData


@dataclass(slots=True)
class Numbered:
    """The context text, each item's number, and one reference dict per number."""

    numbers: ItemNumbers = field(default_factory=ItemNumbers)
    references: list[ReferenceData] = field(default_factory=list)
    context: str = ""


def number_context(
    entities: Sequence[EntityHit], relations: Sequence[RelationHit], chunks: Sequence[ChunkHit]
) -> Numbered:
    """Number the items (entities, relations, chunks) and render the context with them."""
    numbers = ItemNumbers.assign(len(entities), len(relations), len(chunks))
    refs = [r.to_dict() for r in item_references(entities, relations, chunks, numbers)]
    context = render_context(
        [entity_line(e, str(n)) for e, n in zip(entities, numbers.entities, strict=False)],
        [relation_line(r, str(n)) for r, n in zip(relations, numbers.relations, strict=False)],
        [chunk_line(c, str(n)) for c, n in zip(chunks, numbers.chunks, strict=False)],
        refs,
    )
    return Numbered(numbers, refs, context)
