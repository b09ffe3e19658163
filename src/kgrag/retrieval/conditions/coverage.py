"""Which constraints the answer context covers.

A constraint is **covered** when an item of the final context that
applies covers it (a statement of the item names it without conflicting,
see :mod:`kgrag.retrieval.conditions.check`), **conflicting-only** when only
items that conflict (kept or dropped) name it, and **missing** otherwise.
Items of the context that name it without covering it (no version where
the question asks for one) are listed as ``unknown``: they explain, in
:mod:`kgrag.retrieval.conditions.note`, why something present in the sources
still does not answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from kgrag.retrieval.conditions.check import Judgement
from kgrag.retrieval.conditions.constraint import Constraint
from kgrag.retrieval.shapes import CoverageData

Status = Literal["covered", "missing", "conflicting-only"]


@dataclass(slots=True)
class Coverage:
    """One constraint and the items (ids, as the trace names them) bearing on it."""

    constraint: Constraint
    status: Status
    items: list[str] = field(default_factory=list)  # applicable items in the context
    conflicting: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # in the context, naming it, not covering

    def to_dict(self) -> CoverageData:
        return {
            "constraint": self.constraint.to_dict(),
            "status": self.status,
            "items": self.items,
            "conflicting": self.conflicting,
            "unknown": self.unknown,
        }


def coverage(
    asked: Sequence[Constraint],
    judgements: Iterable[Judgement],
    in_context: set[tuple[str, str]],
) -> list[Coverage]:
    """Per constraint: its status and items; ``in_context`` holds the final (kind, id) pairs."""
    judged = list(judgements)
    out = []
    for c in asked:
        naming = [j for j in judged if c.key in j.matched]  # the whole item names it
        present = [j for j in naming if (j.kind, j.id) in in_context]
        items = [j.id for j in present if j.verdict == "applies" and c.key in j.covers]
        conflicting = [j.id for j in naming if j.verdict == "conflicts"]
        unknown = [j.id for j in present if j.verdict != "conflicts" and j.id not in items]
        status: Status = "covered" if items else "conflicting-only" if conflicting else "missing"
        out.append(Coverage(c, status, items, conflicting, unknown))
    return out
