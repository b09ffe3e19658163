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


def _section(lines: Sequence[str]) -> str:
    return f"{HEADER}\n{fenced(chr(10).join(lines))}"


def section_variants(conds: Conditions, kept: Sequence[Judgement], final: Final) -> list[str]:
    """The conditions section, most detailed first ([] when there is nothing to tell the model).

    The first that fits the tokens kept for it is used: with the kept
    conflicting items listed, without them, then the note alone.
    """
    if not kept and not conds.note:
        return []
    asks = ASKS.format(items=", ".join(f"{c.describe()} ({c.kind})" for c in conds.asked))
    missing = [MISSING.format(note=conds.note)] if conds.note else []
    listed = [f"- {_label(j, final)}: {'; '.join(j.reasons)}" for j in kept]
    variants = [[asks, *([KEPT, *listed] if kept else []), *missing, ADVICE]]
    variants += [[asks, *missing, ADVICE], [*missing, ADVICE]] if missing else []
    return [_section(v) for v in variants]


def reserve_text(conds: Conditions) -> str:
    """A section as long as the note can get, to size the tokens kept for it.

    Every qualifier gets the longest sentence of the note, naming all the
    others and three values of its own kind.
    """
    qualifiers = [c for c in conds.asked if c.kind != "object"]
    if not qualifiers:
        return ""
    everything = " and ".join(c.describe() for c in conds.asked)
    sentences = [
        f"The sources describe {everything} for {c.describe()}, {c.describe()} and "
        f"{c.describe()} only, not for {c.describe()}."
        for c in qualifiers
    ]
    asks = ASKS.format(items=", ".join(f"{c.describe()} ({c.kind})" for c in conds.asked))
    return _section([asks, MISSING.format(note=" ".join(sentences)), ADVICE])
