"""Cost ledger: what every model call cost, per role.

The innermost layer of the service stack, so it sees every real attempt
(a retried call counts once per attempt); cache hits are recorded by the
cache layer and cost nothing else.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass

FIELDS = ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "seconds", "errors")


@dataclass(slots=True)
class RoleCost:
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    errors: int = 0


class Ledger:
    """Per-role counters, safe to update from tasks and threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._roles: dict[str, RoleCost] = {}

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

    @contextmanager
    def timed(self, role: str) -> Iterator[dict[str, int]]:
        """Time a call; the body fills the yielded dict's token counts.

        An exception leaving the block records an error and propagates;
        a cancellation records the call without an error.
        """
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        start = time.perf_counter()
        try:
            yield usage
        except Exception:
            self.record(role, seconds=time.perf_counter() - start, error=True, **usage)
            raise
        except BaseException:  # cancelled: the call was made, but did not fail
            self.record(role, seconds=time.perf_counter() - start, **usage)
            raise
        self.record(role, seconds=time.perf_counter() - start, **usage)

    def snapshot(self) -> dict[str, dict[str, float]]:
        """``{role: {field: value}}`` for every role seen so far."""
        with self._lock:
            return {role: asdict(cost) for role, cost in sorted(self._roles.items())}

    def totals(self) -> dict[str, float]:
        """Every field summed over the roles."""
        out: dict[str, float] = {f: 0 for f in FIELDS}
        for cost in self.snapshot().values():
            for f in FIELDS:
                out[f] += cost[f]
        return out

    def reset(self) -> None:
        with self._lock:
            self._roles.clear()
