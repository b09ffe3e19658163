"""Cost ledger: what every model call cost, per role.

The innermost layer of the service stack, so it sees every real attempt
(a retried call counts once per attempt); cache hits are recorded by the
cache layer and cost nothing else.

Two times per role: ``seconds`` sums every call's duration (four parallel
calls of 5 s make 20 s), ``wall_s`` is the wall-clock time during which at
least one call of the role was in flight (5 s for those four calls). Only
calls the ledger saw begin and end (:meth:`Ledger.timed`, :meth:`Ledger.begin`)
add to ``wall_s``; a bare :meth:`Ledger.record` knows no start time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass

FIELDS = (
    "calls",
    "cache_hits",
    "prompt_tokens",
    "completion_tokens",
    "seconds",
    "errors",
    "wall_s",
)


@dataclass(slots=True)
class RoleCost:
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    errors: int = 0
    wall_s: float = 0.0


@dataclass(slots=True)
class _Busy:
    """Calls of one role in flight, and since when at least one has been."""

    count: int = 0
    since: float = 0.0


class Ledger:
    """Per-role counters, safe to update from tasks and threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._roles: dict[str, RoleCost] = {}
        self._busy: dict[str, _Busy] = {}

    def _role(self, role: str) -> RoleCost:
        cost = self._roles.get(role)
        if cost is None:
            cost = self._roles[role] = RoleCost()
        return cost

    def record(
        self,
        role: str,
        *,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        seconds: float = 0.0,
        error: bool = False,
    ) -> None:
        """One real call (successful or not)."""
        with self._lock:
            cost = self._role(role)
            cost.calls += 1
            cost.prompt_tokens += prompt_tokens
            cost.completion_tokens += completion_tokens
            cost.seconds += seconds
            cost.errors += int(error)

    def record_hit(self, role: str) -> None:
        """One answer served from the cache."""
        with self._lock:
            self._role(role).cache_hits += 1

    def begin(self, role: str) -> None:
        """A call of ``role`` starts; pair with :meth:`end` (``wall_s`` runs while any is open)."""
        with self._lock:
            busy = self._busy.setdefault(role, _Busy())
            if busy.count == 0:
                busy.since = time.perf_counter()
            busy.count += 1

    def end(self, role: str) -> None:
        """A call begun with :meth:`begin` is over."""
        with self._lock:
            busy = self._busy[role]
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
    def timed(self, role: str) -> Iterator[dict[str, int]]:
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
                self._finish(role, start, usage, error=True)
                raise
            except BaseException:  # cancelled: the call was made, but did not fail
                self._finish(role, start, usage, error=False)
                raise
            self._finish(role, start, usage, error=False)

    def _finish(self, role: str, start: float, usage: dict[str, int], *, error: bool) -> None:
        self.record(
            role,
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
            out = {role: asdict(cost) for role, cost in sorted(self._roles.items())}
            for role, busy in self._busy.items():
                if busy.count > 0:
                    row = out.setdefault(role, asdict(RoleCost()))
                    row["wall_s"] += now - busy.since
            return dict(sorted(out.items()))

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
            self._roles.clear()
            for busy in self._busy.values():
                busy.since = now
