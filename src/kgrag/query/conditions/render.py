"""What the answer prompt is told about the conditions.

When the check has something to say (conflicting items were kept, or a
qualifier is not covered), the context ends with a section naming the
question's qualifiers, the kept conflicting items and the missing
coverage, and asking the model to say what is missing rather than answer
from an item about something else. Otherwise the context is unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kgrag.query.conditions.check import Judgement
from kgrag.query.context.headers import fenced
from kgrag.query.records import ChunkHit, EntityHit, RelationHit
from kgrag.query.trace import relation_id

if TYPE_CHECKING:
    from kgrag.query.conditions.stage import Conditions

HEADER = "Conditions of the question, checked against the items above:"
ASKS = "The question asks for: {items}."
KEPT = "These items concern something else and are kept only for comparison:"
MISSING = "Not covered by the sources: {note}"
ADVICE = (
    "Answer only from items that meet these conditions. Where the sources do not cover "
    "one, say so plainly instead of answering from an item about something else."
)


@dataclass(slots=True)
class Final:
    """The items of the final context; ``chunk_refs`` holds the chunks' reference ids."""

    entities: Sequence[EntityHit] = ()
    relations: Sequence[RelationHit] = ()
    chunks: Sequence[ChunkHit] = ()
    chunk_refs: Sequence[str] = field(default_factory=list)

    def keys(self) -> set[tuple[str, str]]:
        """(kind, id) of every item, ids as the trace names them."""
        out = {("entity", e.name) for e in self.entities}
        out |= {("relation", relation_id(r.src, r.tgt)) for r in self.relations}
        return out | {("chunk", c.id) for c in self.chunks}


def _label(j: Judgement, final: Final) -> str:
    if j.kind != "chunk":
        return f"{j.kind} {j.id}"
    refs = dict(zip((c.id for c in final.chunks), final.chunk_refs, strict=False))
    return f"chunk with reference_id {refs[j.id]}" if j.id in refs else f"chunk {j.id}"


def render_section(conds: Conditions, kept: Sequence[Judgement], final: Final) -> str:
    """The conditions section ("" when there is nothing to tell the model)."""
    if not kept and not conds.note:
        return ""
    asked = [f"{c.describe()} ({c.kind})" for c in conds.asked]
    lines = [ASKS.format(items=", ".join(asked))]
    if kept:
        lines.append(KEPT)
        lines += [f"- {_label(j, final)}: {'; '.join(j.reasons)}" for j in kept]
    if conds.note:
        lines.append(MISSING.format(note=conds.note))
    lines.append(ADVICE)
    return f"{HEADER}\n{fenced(chr(10).join(lines))}"
