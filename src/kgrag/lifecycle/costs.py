"""The stored all-time cost ledger: what the models of every run together have spent.

Each opened index keeps its models' costs in memory
(:class:`~kgrag.llm.ledger.Ledger`); :class:`StoredCosts` adds them to the
totals kept in the store's meta table (``ledger``), each cost once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kgrag.llm.ledger import Ledger
    from kgrag.storage.base import Storage

Costs = dict[str, dict[str, float]]  # {role: {field: value}}, as Ledger.snapshot gives them


class StoredCosts:
    """Adds one ledger's costs to the stored totals, remembering what it already added."""

    def __init__(self, storage: Storage, ledger: Ledger):
        self.storage, self.ledger = storage, ledger
        self._saved: Costs = {}

    async def save(self) -> None:
        """Add the costs spent since the last save to the stored totals.

        Nothing is written when nothing was spent (read-only commands never
        write), and the read and the write are one transaction, so two
        processes saving at once both count.
        """
        now = self.ledger.snapshot()
        delta = {
            role: {f: v - self._saved.get(role, {}).get(f, 0) for f, v in row.items()}
            for role, row in now.items()
        }
        delta = {role: row for role, row in delta.items() if any(row.values())}
        if not delta:
            return
        async with self.storage.transaction():
            total = await self.storage.get_meta("ledger") or {}
            await self.storage.set_meta("ledger", add_costs(total, delta))
        self._saved = now


def add_costs(total: Costs, delta: Costs) -> Costs:
    """The stored all-time ledger plus one run's costs, field by field.

    ``wall_s`` adds up across runs (one after the other), but a role whose
    stored calls predate it has no wall time to add to: it stays absent
    there rather than claim a wall time that leaves those calls out.
    """
    for role, row in delta.items():
        into = total.setdefault(role, {})
        wall_known = "wall_s" in into or not into.get("calls", 0)
        for name, value in row.items():
            if name != "wall_s" or wall_known:
                into[name] = into.get(name, 0) + value
    return total
