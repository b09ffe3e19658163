"""The whole cost of an index: ``total = initial index + updates + queries``.

Read from the stored operation ledger (:mod:`kgrag.indexing.costs`):

- **initial index**: the index runs that first added documents (``index``)
  and imports (``import``);
- **updates**: everything that changed the index afterwards: ``supersede``
  (an index run replacing documents), ``delete``, ``reindex`` (retry),
  ``rebuild``, ``repair``, ``dedupe``, ``curate``, and calls made outside
  any named operation (``other``);
- **queries**: every ``query:<mode>`` operation.

Calls and tokens are the models' real calls (a retried call counts once
per attempt); ``cache_hits`` cost nothing. ``seconds`` sums the calls'
durations (parallel calls overlap). Money comes from the price table
(``Settings.prices``); a figure that includes tokens of a model without a
price is None ("n/a"), never an estimate. Costs an index stored before it
recorded operations are "earlier": known by role only, and included in
the total without a price.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from kgrag.errors import ConfigError
from kgrag.indexing.costs import stored_rows
from kgrag.llm.ledger import COUNTS, CallCost, CostKey, Prices, QueryCost, money, price_of
from kgrag.storage.layout import LEDGER_META
from kgrag.storage.layout.rows import Costs
from kgrag.storage.layout.typed import read_meta

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

INITIAL = frozenset({"index", "import"})
PARTS = ("initial index", "updates", "queries")
Rows = list[tuple[CostKey, CallCost]]


def part_of(operation: str) -> str:
    """Which part of the formula an operation's calls belong to."""
    if operation.startswith("query"):
        return "queries"
    return "initial index" if operation in INITIAL else "updates"


@dataclass(slots=True)
class CostFigures(QueryCost):
    """Calls, cache hits, tokens, seconds in calls, errors and USD (None: not known)."""

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def figures(rows: Iterable[tuple[CostKey, CallCost]], prices: Prices) -> CostFigures:
    """The rows summed, their money from ``prices``."""
    by_model: dict[str, CallCost] = {}
    for key, cost in rows:
        by_model.setdefault(key.model, CallCost()).add(cost)
    total = CallCost()
    for cost in by_model.values():
        total.add(cost)
    return CostFigures(**asdict(total), usd=money(by_model, prices))


def _plus(parts: list[CostFigures]) -> CostFigures:
    out = CostFigures(usd=0.0)
    for part in parts:
        out.add(part)
        out.usd = None if out.usd is None or part.usd is None else out.usd + part.usd
    return out


@dataclass(slots=True)
class DocumentCost:
    document: str
    file_path: str | None  # None once the document is gone from the index
    cost: CostFigures

    def as_dict(self) -> dict[str, object]:
        return {"document": self.document, "file_path": self.file_path, **self.cost.as_dict()}


@dataclass(slots=True)
class CostReport:
    """What the index's models cost, by part of the formula, operation, model and document."""

    since: str | None  # the first day counted (UTC, YYYY-MM-DD); None: all time
    priced: bool  # a price table was given
    total: CostFigures
    parts: dict[str, CostFigures]  # "initial index", "updates", "queries"
    operations: dict[str, CostFigures]
    models: dict[str, CostFigures]
    documents: list[DocumentCost]  # the costliest documents, costliest first
    unpriced: list[str] = field(default_factory=list)  # models used that have no price
    earlier: CostFigures | None = None  # stored before operations were recorded

    @property
    def formula(self) -> str:
        extra = " + earlier" if self.earlier is not None else ""
        return f"total = initial index + updates + queries{extra}"

    def as_dict(self) -> dict[str, object]:
        return {
            "formula": self.formula,
            "since": self.since,
            "priced": self.priced,
            "total": self.total.as_dict(),
            "parts": {name: f.as_dict() for name, f in self.parts.items()},
            "earlier": None if self.earlier is None else self.earlier.as_dict(),
            "operations": {name: f.as_dict() for name, f in self.operations.items()},
            "models": {name: f.as_dict() for name, f in self.models.items()},
            "documents": [d.as_dict() for d in self.documents],
            "unpriced": list(self.unpriced),
        }


def parse_since(since: str | dt.date | None) -> str | None:
    """``since`` as ``YYYY-MM-DD`` (a date, a datetime, or its ISO text); bad text: ConfigError."""
    if since is None or isinstance(since, dt.date):
        return None if since is None else since.isoformat()[:10]
    try:
        return dt.date.fromisoformat(since.strip()[:10]).isoformat()
    except ValueError:
        raise ConfigError(f"--since must be a date as YYYY-MM-DD, got {since!r}") from None


async def cost_report(
    storage: Storage, prices: Prices, since: str | dt.date | None = None, top: int = 10
) -> CostReport:
    """The report over the stored ledger; ``since``: from that day on; ``top`` documents."""
    first = parse_since(since)
    rows = [(k, c) for k, c in await stored_rows(storage) if first is None or k.day >= first]
    earlier = None if first is not None else await _earlier(storage, rows)
    parts = {
        name: figures([r for r in rows if part_of(r[0].operation) == name], prices)
        for name in PARTS
    }
    return CostReport(
        since=first,
        priced=bool(prices),
        total=_plus([*parts.values(), *([earlier] if earlier else [])]),
        parts=parts,
        operations=_grouped(rows, prices, "operation"),
        models=_grouped(rows, prices, "model"),
        documents=await _documents(storage, rows, prices, top),
        unpriced=_unpriced(rows, prices),
        earlier=earlier,
    )


def _grouped(rows: Rows, prices: Prices, by: str) -> dict[str, CostFigures]:
    """The rows' figures per value of the key field ``by``, sorted by that value."""
    groups: dict[str, Rows] = {}
    for key, cost in rows:
        groups.setdefault(getattr(key, by), []).append((key, cost))
    return {name: figures(group, prices) for name, group in sorted(groups.items())}


def _unpriced(rows: Rows, prices: Prices) -> list[str]:
    """The models that used tokens and have no price (all of them without a table)."""
    used = {k.model for k, c in rows if c.prompt_tokens or c.completion_tokens}
    return sorted(m for m in used if price_of(m, prices) is None)


async def _documents(storage: Storage, rows: Rows, prices: Prices, top: int) -> list[DocumentCost]:
    """The ``top`` costliest documents: by money when every one is priced, else by tokens."""
    per = _grouped([r for r in rows if r[0].document], prices, "document")
    by_money = all(f.usd is not None for f in per.values())
    ranked = sorted(
        per.items(),
        key=lambda item: (-(item[1].usd or 0.0) if by_money else 0.0, -item[1].tokens, item[0]),
    )[: max(0, top)]
    records = await storage.doc_status.get_many([name for name, _ in ranked])
    return [
        DocumentCost(name, records[name].file_path if name in records else None, cost)
        for name, cost in ranked
    ]


async def _earlier(storage: Storage, rows: Rows) -> CostFigures | None:
    """What the role ledger holds beyond the operation rows: costs stored before them."""
    stored = await read_meta(storage, LEDGER_META, Costs) or {}
    by_role: dict[str, CallCost] = {}
    for key, cost in rows:
        by_role.setdefault(key.role, CallCost()).add(cost)
    out = CostFigures()
    for role, row in stored.items():
        counted = by_role.get(role, CallCost())
        for name in COUNTS:
            gap = row.get(name, 0) - getattr(counted, name)
            setattr(out, name, getattr(out, name) + max(0, type(getattr(out, name))(gap)))
    integral = (out.calls, out.cache_hits, out.prompt_tokens, out.completion_tokens, out.errors)
    if not any(integral):
        return None
    out.usd = None if out.tokens else 0.0
    return out
