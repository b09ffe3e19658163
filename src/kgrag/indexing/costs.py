"""The stored all-time cost ledger: what the models of every run together have spent.

Each opened index keeps its models' costs in memory
(:class:`~kgrag.llm.ledger.Ledger`); :class:`StoredCosts` adds them to the
totals the store keeps, each cost once, in two forms:

- the meta key ``ledger``: ``{role: {field: value}}`` (``kgrag status``);
  indexes of every version have it;
- the key-value namespace ``cost_ledger``: one row per day, operation,
  document, model and role (``kgrag cost``, :mod:`kgrag.maintenance.cost_report`).
  A namespace of the ordinary key-value store, so no schema change: an
  index written before it existed simply has no rows, and what its meta
  ledger holds beyond the rows is shown as "earlier" costs.

:func:`indexing` labels the calls of an index run: documents the run
supersedes count as ``supersede``, the others as ``index``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import TYPE_CHECKING

from kgrag.llm.ledger import CallCost, CostKey, operation
from kgrag.storage.layout import COST_LEDGER, LEDGER_META, cost_row_key
from kgrag.storage.layout.rows import CostRow
from kgrag.storage.layout.typed import TypedKV, read_meta

if TYPE_CHECKING:
    from kgrag.indexing.enqueue import EnqueueReport
    from kgrag.llm.ledger import Ledger
    from kgrag.storage.base import JSONObject, KVStore, Storage
    from kgrag.types import Document

Costs = dict[str, dict[str, float]]  # {role: {field: value}}, as Ledger.snapshot gives them
NAMESPACE = COST_LEDGER
KEY_FIELDS = ("day", "operation", "document", "model", "role")


class StoredCosts:
    """Adds one ledger's costs to the stored totals, remembering what it already added."""

    def __init__(self, storage: Storage, ledger: Ledger):
        self.storage, self.ledger = storage, ledger
        self._saved: Costs = {}
        self._saved_keys: dict[CostKey, CallCost] = {}

    async def save(self) -> None:
        """Add the costs spent since the last save to the stored totals.

        Nothing is written when nothing was spent (read-only commands never
        write), and the reads and the writes are one transaction, so two
        processes saving at once both count.
        """
        now, keys = self.ledger.snapshot(), self.ledger.entries()
        delta = _role_delta(now, self._saved)
        key_delta = {k: c.minus(self._saved_keys.get(k, CallCost())) for k, c in keys.items()}
        key_delta = {k: c for k, c in key_delta.items() if c}
        if not delta and not key_delta:
            return
        async with self.storage.transaction():
            if delta:
                total = await read_meta(self.storage, LEDGER_META, Costs) or {}
                await self.storage.set_meta(LEDGER_META, add_costs(total, delta))
            await add_rows(self.storage.kv(NAMESPACE), key_delta)
        self._saved, self._saved_keys = now, keys


def _role_delta(now: Costs, saved: Costs) -> Costs:
    """What each role spent since ``saved``, roles that spent nothing left out."""
    delta = {
        role: {f: v - saved.get(role, {}).get(f, 0) for f, v in row.items()}
        for role, row in now.items()
    }
    return {role: row for role, row in delta.items() if any(row.values())}


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


def row_key(key: CostKey) -> str:
    """The stored key of a :class:`CostKey`'s row."""
    return cost_row_key([getattr(key, name) for name in KEY_FIELDS])


async def add_rows(kv: KVStore, delta: dict[CostKey, CallCost]) -> None:
    """Add ``delta`` to the stored rows (each row: its key's fields and its counts)."""
    if not delta:
        return
    names = [row_key(k) for k in delta]
    stored = await TypedKV(kv, CostRow).get_many(names)
    rows: dict[str, JSONObject] = {}
    for name, key, cost, old in zip(names, delta, delta.values(), stored, strict=True):
        counts = CallCost()
        if old is not None:
            counts.add(old)
        counts.add(cost)
        rows[name] = {**asdict(key), **asdict(counts)}
    await kv.upsert(rows)


async def stored_rows(storage: Storage) -> list[tuple[CostKey, CallCost]]:
    """Every stored row of the operation ledger."""
    kv = TypedKV(storage.kv(NAMESPACE), CostRow)
    out = []
    for row in await kv.get_many(await kv.keys()):
        if row is not None:
            counts = CallCost()
            counts.add(row)
            out.append((CostKey(*(str(row.get(n, "")) for n in KEY_FIELDS)), counts))
    return out


@contextmanager
def indexing(queued: EnqueueReport, docs: list[Document]) -> Iterator[None]:
    """Label an index run's calls: ``supersede`` for the documents it replaces, else ``index``.

    A run that only supersedes counts its shared calls (deferred summaries)
    as ``supersede`` too.
    """
    updates = {*queued.updated, *queued.moved, *(d.id for d in docs if d.replaces)}
    only_updates = bool(queued.queued) and set(queued.queued) <= updates
    with operation("supersede" if only_updates else "index", updates=updates):
        yield
