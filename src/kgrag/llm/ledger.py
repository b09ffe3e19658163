"""Cost ledger: what every model call cost, per role, and per operation and document.

The innermost layer of the service stack, so it sees every real attempt
(a retried call counts once per attempt); cache hits are recorded by the
cache layer and cost nothing else.

Two times per role: ``seconds`` sums every call's duration (four parallel
calls of 5 s make 20 s), ``wall_s`` is the wall-clock time during which at
least one call of the role was in flight (5 s for those four calls). Only
calls the ledger saw begin and end (:meth:`Ledger.timed`, :meth:`Ledger.begin`)
add to ``wall_s``; a bare :meth:`Ledger.record` knows no start time.

Every call is also counted under a :class:`CostKey`: the day (UTC), the
*operation* it was made for (``index``, ``supersede``, ``delete``,
``query:local``...), the document (index side, when known), the model and
the role. The operation and document come from the caller's context
(:func:`operation`, :func:`document_context`): an asyncio task started
inside an operation inherits it. :func:`tallied` counts the calls of one
block on their own (a query's cost), whatever else runs at the same time.
Money is tokens times the price table (:func:`money`); without a price for
a model that was used, it is unknown (None), never guessed.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import threading
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Coroutine,
    Iterable,
    Iterator,
    Mapping,
)
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from dataclasses import asdict, dataclass, field
from typing import ParamSpec, TypedDict, TypeVar

FIELDS = (
    "calls",
    "cache_hits",
    "prompt_tokens",
    "completion_tokens",
    "seconds",
    "errors",
    "wall_s",
)
COUNTS = FIELDS[:-1]  # what a CostKey counts (wall time is kept per role only)
OTHER = "other"  # the operation of a call made outside every labelled operation

Prices = Mapping[str, Mapping[str, float]]  # model -> {"prompt": USD, "completion": USD} per 1M
P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


@dataclass(slots=True)
class CallCost:
    """The counts of one :class:`CostKey` (or of any sum of them)."""

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    errors: int = 0

    def add(self, other: CallCost | Mapping[str, object]) -> None:
        """Add ``other``'s counts (a CallCost, or a stored row: a ``CostRow`` or a role's ledger) to these."""
        row = asdict(other) if isinstance(other, CallCost) else other
        for name in COUNTS:
            setattr(self, name, getattr(self, name) + type(getattr(self, name))(row.get(name, 0)))

    def minus(self, other: CallCost) -> CallCost:
        """These counts less ``other``'s."""
        return CallCost(*(getattr(self, n) - getattr(other, n) for n in COUNTS))

    def __bool__(self) -> bool:
        return any(getattr(self, n) for n in COUNTS)


@dataclass(slots=True)
class RoleCost(CallCost):
    """A role's counts, and the wall time its calls kept busy (:data:`FIELDS`)."""

    wall_s: float = 0.0


@dataclass(frozen=True, slots=True)
class CostKey:
    """What one call is counted under."""

    day: str  # UTC date of the call, YYYY-MM-DD
    operation: str  # index, supersede, delete, dedupe, query:<mode>, ...
    document: str  # the document the call was for; "" when not one document's
    model: str  # the model's identity, without the host
    role: str  # extract, summary, keywords, answer, embed, rerank, ...


@dataclass(slots=True)
class _Busy:
    """Calls of one role in flight, and since when at least one has been."""

    count: int = 0
    since: float = 0.0


# -- prices ------------------------------------------------------------------


def price_of(model: str, prices: Prices) -> Mapping[str, float] | None:
    """The price entry of ``model`` (``vendor:name``): by the full identity, else by the name."""
    if model in prices:
        return prices[model]
    return prices.get(model.split(":", 1)[-1])


def money(by_model: Mapping[str, CallCost], prices: Prices) -> float | None:
    """USD for these counts per model; None when any model that used tokens has no price."""
    if not prices:
        return None
    total = 0.0
    for model, cost in by_model.items():
        tokens = cost.prompt_tokens + cost.completion_tokens
        price = price_of(model, prices)
        if price is None:
            if tokens:
                return None
            continue
        total += cost.prompt_tokens * price.get("prompt", 0.0) / 1e6
        total += cost.completion_tokens * price.get("completion", 0.0) / 1e6
    return total


# -- the context a call is made in -------------------------------------------


class Tally:
    """The calls of one block (see :func:`tallied`), per model."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.by_model: dict[str, CallCost] = {}

    def add(self, model: str, cost: CallCost) -> None:
        with self._lock:
            self.by_model.setdefault(model, CallCost()).add(cost)

    def total(self) -> CallCost:
        out = CallCost()
        with self._lock:
            for cost in self.by_model.values():
                out.add(cost)
        return out

    def cost(self, prices: Prices) -> QueryCost:
        """What the block cost, money from ``prices`` (None without them)."""
        with self._lock:
            usd = money(dict(self.by_model), prices)
        return QueryCost(**asdict(self.total()), usd=usd)


@dataclass(slots=True)
class QueryCost(CallCost):
    """What one query cost: real calls, cache hits, tokens, seconds in calls and USD."""

    usd: float | None = None  # None: no price for a model the query used

    def as_dict(self) -> QueryCostRow:
        return QueryCostRow(
            calls=self.calls,
            cache_hits=self.cache_hits,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            seconds=self.seconds,
            errors=self.errors,
            usd=self.usd,
        )


class QueryCostRow(TypedDict):
    """A :class:`QueryCost` as JSON (a query's ``cost``), its fields in the dataclass's order."""

    calls: int
    cache_hits: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    errors: int
    usd: float | None


@dataclass(frozen=True, slots=True)
class Scope:
    """The operation and document calls made now are for, and the tallies counting them."""

    operation: str = OTHER
    document: str = ""
    updates: frozenset[str] = frozenset()  # documents whose calls count as "supersede"
    tallies: tuple[Tally, ...] = ()


_OUTSIDE = Scope()  # calls made outside every labelled operation
_SCOPE: contextvars.ContextVar[Scope] = contextvars.ContextVar("kgrag_cost_scope", default=_OUTSIDE)


def current_scope() -> Scope:
    return _SCOPE.get()


@contextmanager
def within(scope: Scope) -> Iterator[Scope]:
    """Calls made in the block are counted as ``scope`` says (see :func:`query_scope`)."""
    previous = _SCOPE.get()
    _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.set(previous)  # not reset(): a generator may end in another context


@contextmanager
def operation(
    name: str, *, updates: Iterable[str] = (), unless_set: bool = False
) -> Iterator[None]:
    """Calls made in the block count for operation ``name``.

    ``updates``: documents whose calls count as ``supersede`` (an index run
    replacing them). ``unless_set``: keep an operation already in force
    (curation run by ``dedupe --apply`` stays ``dedupe``).
    """
    now = _SCOPE.get()
    if unless_set and now.operation != OTHER:
        yield
        return
    scope = dataclasses.replace(now, operation=name, updates=frozenset(updates))
    with within(scope):
        yield


@contextmanager
def tallied() -> Iterator[Tally]:
    """A :class:`Tally` of the calls made in the block (and the tasks it starts)."""
    tally = Tally()
    now = _SCOPE.get()
    with within(dataclasses.replace(now, tallies=(*now.tallies, tally))):
        yield tally


def query_scope(mode: str, tally: Tally) -> Scope:
    """The scope of one query's calls (operation ``query:<mode>``), counted by ``tally`` too.

    Entered with :func:`within` around each step of the query, never across
    a ``yield``, so an answer stream's calls count for it whoever iterates.
    """
    now = _SCOPE.get()
    return Scope(f"query:{mode}", "", frozenset(), (*now.tallies, tally))


async def scoped_steps(pieces: AsyncIterator[T], scope: Scope) -> AsyncGenerator[T, None]:
    """``pieces``, each step and the closing run :func:`within` ``scope``."""
    try:
        while True:
            with within(scope):
                try:
                    piece = await anext(pieces)
                except StopAsyncIteration:
                    return
            yield piece
    finally:
        close = getattr(pieces, "aclose", None)
        if close is not None:
            with within(scope):
                await close()


def document_context(doc_id: str) -> contextvars.Context:
    """A copy of the current context in which calls are for document ``doc_id``.

    For ``asyncio.create_task(..., context=...)``: the document's calls count
    as ``supersede`` when the operation named it among its updates.
    """
    now = _SCOPE.get()
    name = "supersede" if doc_id in now.updates else now.operation
    context = contextvars.copy_context()
    context.run(_SCOPE.set, dataclasses.replace(now, operation=name, document=doc_id))
    return context


def labelled(
    name: str,
) -> Callable[
    [Callable[P, Coroutine[object, object, R]]], Callable[P, Coroutine[object, object, R]]
]:
    """Decorate an async function: the calls it makes count for operation ``name``."""

    def wrap(
        func: Callable[P, Coroutine[object, object, R]],
    ) -> Callable[P, Coroutine[object, object, R]]:
        @functools.wraps(func)
        async def run(*args: P.args, **kwargs: P.kwargs) -> R:
            with operation(name, unless_set=True):
                return await func(*args, **kwargs)

        return run

    return wrap


@asynccontextmanager
async def labelled_block(
    block: AbstractAsyncContextManager[None], name: str
) -> AsyncIterator[None]:
    """``block`` (a writer lease, say) whose calls count for ``name`` unless one is set."""
    with operation(name, unless_set=True):
        async with block:
            yield


def _model_name(identity: str) -> str:
    """``vendor:model`` without the ``@host`` that serves it."""
    return identity.split("@", 1)[0]


# -- the ledger ----------------------------------------------------------------


@dataclass
class _Counts:
    """What a ledger holds: per role, per key, and the calls in flight per role."""

    roles: dict[str, RoleCost] = field(default_factory=dict)
    keys: dict[CostKey, CallCost] = field(default_factory=dict)
    busy: dict[str, _Busy] = field(default_factory=dict)


class Ledger:
    """Per-role and per-key counters, safe to update from tasks and threads.

    ``clock`` gives the time (seconds since the epoch) that dates a call.
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._lock = threading.Lock()
        self._counts = _Counts()
        self.clock = clock

    def _role(self, role: str) -> RoleCost:
        roles = self._counts.roles
        cost = roles.get(role)
        if cost is None:
            cost = roles[role] = RoleCost()
        return cost

    def _key(self, role: str, model: str) -> tuple[CostKey, Scope]:
        scope = _SCOPE.get()
        day = time.strftime("%Y-%m-%d", time.gmtime(self.clock()))
        return CostKey(day, scope.operation, scope.document, _model_name(model), role), scope

    def _count(self, role: str, model: str, cost: CallCost) -> None:
        """Add ``cost`` under its key and to the tallies in force (lock held)."""
        key, scope = self._key(role, model)
        self._counts.keys.setdefault(key, CallCost()).add(cost)
        for tally in scope.tallies:
            tally.add(key.model, cost)

    def record(
        self,
        role: str,
        *,
        model: str = "",
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        seconds: float = 0.0,
        error: bool = False,
    ) -> None:
        """One real call (successful or not) of ``model`` (its identity)."""
        cost = CallCost(1, 0, prompt_tokens, completion_tokens, seconds, int(error))
        with self._lock:
            row = self._role(role)
            row.calls += 1
            row.prompt_tokens += prompt_tokens
            row.completion_tokens += completion_tokens
            row.seconds += seconds
            row.errors += int(error)
            self._count(role, model, cost)

    def record_hit(self, role: str, *, model: str = "") -> None:
        """One answer served from the cache."""
        with self._lock:
            self._role(role).cache_hits += 1
            self._count(role, model, CallCost(cache_hits=1))

    def begin(self, role: str) -> None:
        """A call of ``role`` starts; pair with :meth:`end` (``wall_s`` runs while any is open)."""
        with self._lock:
            busy = self._counts.busy.setdefault(role, _Busy())
            if busy.count == 0:
                busy.since = time.perf_counter()
            busy.count += 1

    def end(self, role: str) -> None:
        """A call begun with :meth:`begin` is over."""
        with self._lock:
            busy = self._counts.busy[role]
            busy.count -= 1
            if busy.count == 0:
                self._role(role).wall_s += time.perf_counter() - busy.since

    @contextmanager
    def in_flight(self, role: str) -> Iterator[None]:
        """:meth:`begin` and :meth:`end` around the block."""
        self.begin(role)
        try:
            yield
        finally:
            self.end(role)

    @contextmanager
    def timed(self, role: str, *, model: str = "") -> Iterator[dict[str, int]]:
        """Time a call; the body fills the yielded dict's token counts.

        An exception leaving the block records an error and propagates;
        a cancellation records the call without an error.
        """
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        start = time.perf_counter()
        with self.in_flight(role):
            try:
                yield usage
            except Exception:
                self._finish(role, model, start, usage, error=True)
                raise
            except BaseException:  # cancelled: the call was made, but did not fail
                self._finish(role, model, start, usage, error=False)
                raise
            self._finish(role, model, start, usage, error=False)

    def _finish(
        self, role: str, model: str, start: float, usage: dict[str, int], *, error: bool
    ) -> None:
        self.record(
            role,
            model=model,
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=usage["completion_tokens"],
            seconds=time.perf_counter() - start,
            error=error,
        )

    def snapshot(self) -> dict[str, dict[str, float]]:
        """``{role: {field: value}}`` for every role seen so far.

        ``wall_s`` includes the current stretch of a role with calls in flight.
        """
        now = time.perf_counter()
        with self._lock:
            out = {role: asdict(cost) for role, cost in sorted(self._counts.roles.items())}
            for role, busy in self._counts.busy.items():
                if busy.count > 0:
                    row = out.setdefault(role, asdict(RoleCost()))
                    row["wall_s"] += now - busy.since
            return dict(sorted(out.items()))

    def entries(self) -> dict[CostKey, CallCost]:
        """The counts of every key seen so far (copies)."""
        with self._lock:
            return {key: dataclasses.replace(cost) for key, cost in self._counts.keys.items()}

    def totals(self) -> dict[str, float]:
        """Every field summed over the roles."""
        out: dict[str, float] = {f: 0 for f in FIELDS}
        for cost in self.snapshot().values():
            for f in FIELDS:
                out[f] += cost[f]
        return out

    def reset(self) -> None:
        """Forget every count (calls in flight keep counting their wall time from now)."""
        now = time.perf_counter()
        with self._lock:
            self._counts.roles.clear()
            self._counts.keys.clear()
            for busy in self._counts.busy.values():
                busy.since = now
