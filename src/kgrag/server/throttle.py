"""Login throttling: a caller who keeps guessing one user's password is made to wait.

Failed logins are counted per (client address, user name) over a sliding
window; past ``max_failures`` the next attempts get 429 with Retry-After
until the oldest failure leaves the window, right password or not. A
success clears the count. Counting per pair keeps a guesser from locking
the user out for everyone else.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

MAX_KEYS = 10_000


@dataclass
class LoginThrottle:
    """Failures per (address, user) within ``window_s`` seconds."""

    max_failures: int = 5
    window_s: float = 300.0
    clock: Callable[[], float] = time.monotonic
    _failures: dict[tuple[str, str], deque[float]] = field(default_factory=dict)

    def wait_s(self, address: str, user: str) -> float:
        """Seconds before ``user`` may be tried again from ``address`` (0: now)."""
        times = self._recent((address, user))
        if len(times) < self.max_failures:
            return 0.0
        return max(times[0] + self.window_s - self.clock(), 0.0)

    def failed(self, address: str, user: str) -> None:
        if len(self._failures) >= MAX_KEYS:
            self._failures.pop(next(iter(self._failures)))
        self._failures.setdefault((address, user), deque()).append(self.clock())

    def succeeded(self, address: str, user: str) -> None:
        self._failures.pop((address, user), None)

    def _recent(self, key: tuple[str, str]) -> deque[float]:
        times = self._failures.get(key, deque())
        while times and times[0] <= self.clock() - self.window_s:
            times.popleft()
        return times
