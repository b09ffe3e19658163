"""What an evaluation's model calls cost, read from the model ledger (:mod:`kgrag.llm.ledger`).

The evaluation asks one question at a time, so the ledger's change over
one question is that question's cost. Every numeric field the ledger keeps
is counted (calls, cache hits, tokens, and whatever it learns to count),
except the times, which are no cost of the answer.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

TIME_FIELDS = frozenset({"seconds", "wall_s"})
Counts = dict[str, float]


class LedgerLike(Protocol):
    def snapshot(self) -> dict[str, dict[str, float]]: ...


@dataclass(slots=True)
class Cost:
    """The ledger's change over one piece of work, per role (``embed``, ``answer``...)."""

    by_role: dict[str, Counts] = field(default_factory=dict)

    @property
    def total(self) -> Counts:
        """Every field summed over the roles."""
        out: Counts = {}
        for counts in self.by_role.values():
            for name, value in counts.items():
                out[name] = out.get(name, 0) + value
        return out


def _numbers(row: dict[str, float]) -> Counts:
    return {
        k: v
        for k, v in row.items()
        if k not in TIME_FIELDS and isinstance(v, int | float) and not isinstance(v, bool)
    }


def difference(before: dict[str, dict[str, float]], after: dict[str, dict[str, float]]) -> Cost:
    """The change from the ledger snapshot ``before`` to ``after`` (roles that changed only)."""
    out: dict[str, Counts] = {}
    for role, row in after.items():
        old = _numbers(before.get(role, {}))
        changed = {k: v - old.get(k, 0) for k, v in _numbers(row).items()}
        if any(changed.values()):
            out[role] = changed
    return Cost(out)


class CostMeter:
    """Measures the ledger's change around a block: ``with meter.measure() as cost: ...``."""

    def __init__(self, ledger: LedgerLike | None):
        self.ledger = ledger

    @contextmanager
    def measure(self) -> Iterator[Cost]:
        cost = Cost()
        if self.ledger is None:
            yield cost
            return
        before = self.ledger.snapshot()
        try:
            yield cost
        finally:
            cost.by_role = difference(before, self.ledger.snapshot()).by_role


@dataclass(slots=True)
class CostSummary:
    """The cost of a run of answers: totals, per role, and per answer (the mean)."""

    answers: int = 0
    total: Counts = field(default_factory=dict)
    by_role: dict[str, Counts] = field(default_factory=dict)

    @classmethod
    def of(cls, costs: Sequence[Cost]) -> CostSummary:
        by_role: dict[str, Counts] = {}
        for cost in costs:
            for role, counts in cost.by_role.items():
                row = by_role.setdefault(role, {})
                for name, value in counts.items():
                    row[name] = row.get(name, 0) + value
        return cls(len(costs), Cost(by_role).total, dict(sorted(by_role.items())))

    @property
    def per_answer(self) -> Counts:
        n = max(self.answers, 1)
        return {k: round(v / n, 2) for k, v in self.total.items()}

    def to_dict(self) -> dict[str, object]:
        return {
            "answers": self.answers,
            "per_answer": self.per_answer,
            "total": self.total,
            "by_role": self.by_role,
        }
