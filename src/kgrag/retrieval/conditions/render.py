"""What the answer prompt is told about the conditions.

When the check has something to say (conflicting items were kept, or a
qualifier is not covered), the context ends with a section naming the
question's constraints, the kept conflicting items (by reference number,
grouped by reason) and the missing coverage, and asking the model to say
what is missing rather than answer from an item about something else.
Otherwise the context is unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from kgrag.retrieval.conditions.check import Judgement
from kgrag.retrieval.context.headers import fenced
from kgrag.retrieval.records import ChunkHit, EntityHit, RelationHit
from kgrag.retrieval.trace import relation_id

if TYPE_CHECKING:
    from kgrag.retrieval.conditions.stage import Conditions

HEADER = "Conditions of the question, checked against the items above:"
ASKS = "The question asks for: {items}."
KEPT = "Items about something else, kept only for comparison (do not answer from them):"
MISSING = "Not covered by the sources: {note}"
ADVICE = (
    "Answer only from items that meet these conditions. Where the sources do not cover "
    "one, say so plainly instead of answering from an item about something else."
)


class Numbers(Protocol):
    """The context's reference numbers, aligned with its entities, relations and chunks."""

    entities: list[int]
    relations: list[int]
    chunks: list[int]


@dataclass(slots=True)
class Final:
    """The items of the final context and, when known, their reference numbers."""

    entities: Sequence[EntityHit] = ()
    relations: Sequence[RelationHit] = ()
    chunks: Sequence[ChunkHit] = ()
    numbers: Numbers | None = None

    def ids(self) -> list[tuple[str, str]]:
        """(kind, id) of every item in context order, ids as the trace names them."""
        out = [("entity", e.name) for e in self.entities]
        out += [("relation", relation_id(r.src, r.tgt)) for r in self.relations]
        return out + [("chunk", c.id) for c in self.chunks]

    def keys(self) -> set[tuple[str, str]]:
        return set(self.ids())

    def label(self, kind: str, item_id: str) -> str:
        """``[3]`` for a numbered item, else ``entity FW-B`` (kind and id)."""
        if self.numbers is not None:
            numbers = [*self.numbers.entities, *self.numbers.relations, *self.numbers.chunks]
            found = dict(zip(self.ids(), numbers, strict=False)).get((kind, item_id))
            if found is not None:
                return f"[{found}]"
        return f"{kind} {item_id}"


def _kept_lines(kept: Sequence[Judgement], final: Final) -> list[str]:
    """One line per reason: the items it applies to, then the reason."""
    by_reason: dict[str, list[str]] = {}
    for j in kept:
        by_reason.setdefault("; ".join(j.reasons), []).append(final.label(j.kind, j.id))
    return [f"- {', '.join(labels)}: {reason}" for reason, labels in by_reason.items()]


def _section(lines: Sequence[str]) -> str:
    return f"{HEADER}\n{fenced(chr(10).join(lines))}"


def _asks(conds: Conditions) -> str:
    return ASKS.format(items=", ".join(f"{c.describe()} ({c.kind})" for c in conds.asked))


def section_variants(conds: Conditions, kept: Sequence[Judgement], final: Final) -> list[str]:
    """The conditions section, most detailed first ([] when there is nothing to tell the model).

    The first that fits the tokens kept for it is used: with the kept
    conflicting items listed, without them, then the note alone.
    """
    if not kept and not conds.note:
        return []
    missing = [MISSING.format(note=conds.note)] if conds.note else []
    listed = [KEPT, *_kept_lines(kept, final)] if kept else []
    variants = [[_asks(conds), *listed, *missing, ADVICE]]
    variants += [[_asks(conds), *missing, ADVICE], [*missing, ADVICE]] if missing else []
    return [_section(v) for v in variants]


def reserve_text(conds: Conditions, chunk_slots: int) -> str:
    """A section as long as it can get, to size the tokens kept for it.

    Every qualifier gets the longest sentence of the note (naming all the
    other constraints and three values of its own kind); with kept
    conflicting items, each reason known so far lists every judged item
    and ``chunk_slots`` chunks.
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
    lines = [_asks(conds), MISSING.format(note=" ".join(sentences)), ADVICE]
    if conds.keep_conflicting:
        judged = [j for j in conds.judgements.values() if j.verdict == "conflicts"]
        reasons = {"; ".join(j.reasons) for j in judged} or {s[:80] for s in sentences[:1]}
        refs = ", ".join(["[999]"] * (len(judged) + chunk_slots))
        lines += [KEPT, *(f"- {refs}: {reason}" for reason in sorted(reasons))]
    return _section(lines)
