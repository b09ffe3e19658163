"""Login throttling: a caller who keeps guessing one user's password is made to wait.

Failed logins are counted per (client address, user name) over a sliding
window; past ``max_failures`` the next attempts get 429 with Retry-After
until the oldest failure leaves the window, right password or not. A
success clears the count. Counting per pair keeps a guesser from locking
the user out for everyone else.

:class:`LoginThrottle` is the rule; a :class:`FailureLog` keeps the
failures. The server keeps them in its default workspace's store
(:class:`StoredLog`), so every server process on one store counts the same
failures: a load balancer spreading a guesser over N processes does not
give it N times the tries. Times are wall-clock seconds, comparable
between machines.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from kgrag.storage.layout import LOGIN_FAILURES
from kgrag.storage.layout.rows import LoginFailuresRow
from kgrag.storage.layout.typed import TypedKV

if TYPE_CHECKING:
    from kgrag.storage.base import KVStore

MAX_KEYS = 10_000
NAMESPACE = LOGIN_FAILURES


class FailureLog(Protocol):
    """Failure times per (address, user)."""

    async def times(self, address: str, user: str) -> list[float]: ...
    async def put(self, address: str, user: str, times: list[float]) -> None:
        """Replace the pair's times (none: forget the pair)."""


@dataclass
class MemoryLog:
    """Failures in this process only (at most :data:`MAX_KEYS` pairs, oldest dropped)."""

    failures: dict[tuple[str, str], list[float]] = field(default_factory=dict)

    async def times(self, address: str, user: str) -> list[float]:
        return list(self.failures.get((address, user), []))

    async def put(self, address: str, user: str, times: list[float]) -> None:
        self.failures.pop((address, user), None)
        if times:
            if len(self.failures) >= MAX_KEYS:
                self.failures.pop(next(iter(self.failures)))
            self.failures[(address, user)] = times


@dataclass
class StoredLog:
    """Failures in a key-value namespace, shared by every process on the store."""

    kv: KVStore
    window_s: float = 300.0

    @staticmethod
    def key(address: str, user: str) -> str:
        return hashlib.sha256(f"{address}\0{user}".encode()).hexdigest()

    @property
    def rows(self) -> TypedKV[LoginFailuresRow]:
        return TypedKV(self.kv, LoginFailuresRow)

    async def times(self, address: str, user: str) -> list[float]:
        value = await self.rows.get(self.key(address, user))
        return [float(t) for t in value.get("times", [])] if value else []

    async def put(self, address: str, user: str, times: list[float]) -> None:
        key = self.key(address, user)
        if not times:
            await self.kv.delete([key])
            return
        await self.kv.upsert({key: {"times": times}})
        if await self.kv.count() > MAX_KEYS:
            await self._forget_old(times[-1])

    async def _forget_old(self, now: float) -> None:
        """Drop the pairs whose last failure left the window (many pairs: someone is guessing)."""
        keys = await self.kv.keys()
        values = await self.rows.get_many(keys)
        old = [k for k, v in zip(keys, values, strict=True) if _last(v) <= now - self.window_s]
        await self.kv.delete(old)


def _last(value: LoginFailuresRow | None) -> float:
    times = (value.get("times") if value else None) or [0.0]
    return float(times[-1])


@dataclass
class LoginThrottle:
    """At most ``max_failures`` failures per (address, user) within ``window_s`` seconds."""

    max_failures: int = 5
    window_s: float = 300.0
    clock: Callable[[], float] = time.time

    async def wait_s(self, log: FailureLog, address: str, user: str) -> float:
        """Seconds before ``user`` may be tried again from ``address`` (0: now)."""
        times = self._recent(await log.times(address, user))
        if len(times) < self.max_failures:
            return 0.0
        return max(times[0] + self.window_s - self.clock(), 0.0)

    async def failed(self, log: FailureLog, address: str, user: str) -> None:
        times = self._recent(await log.times(address, user))
        await log.put(address, user, [*times, self.clock()])

    async def succeeded(self, log: FailureLog, address: str, user: str) -> None:
        await log.put(address, user, [])

    def _recent(self, times: list[float]) -> list[float]:
        return [t for t in times if t > self.clock() - self.window_s]
