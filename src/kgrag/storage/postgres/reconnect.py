"""Telling a lost connection from other errors, and waiting for the server to return.

:class:`~kgrag.storage.postgres.db.Database` runs a read or a write again
whole when it failed by :func:`is_lost`, waiting with a :class:`Backoff`
between attempts until its budget (``postgres_reconnect_s``) is spent.
"""

from __future__ import annotations

import asyncio
import random
import time

FIRST_WAIT_S, MAX_WAIT_S = 0.05, 2.0  # the backoff between attempts after a connection loss
# admin shutdown, crash shutdown, cannot connect now (the server is starting or stopping)
_LOST_STATES = ("57P01", "57P02", "57P03")


def is_lost(exc: BaseException) -> bool:
    """Whether ``exc`` (a psycopg error) says the connection or the server went away."""
    import psycopg

    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate  # None: the socket broke without a word from the server
    return state is None or state.startswith("08") or state in _LOST_STATES


class Backoff:
    """Waits of 50 ms doubling to 2 s (jittered) while ``budget_s`` lasts."""

    def __init__(self, budget_s: float):
        self.budget_s = budget_s
        self._deadline = time.monotonic() + budget_s
        self._wait_s = FIRST_WAIT_S

    def left(self) -> float:
        return max(0.0, self._deadline - time.monotonic())

    async def sleep(self) -> bool:
        """Wait before the next attempt; False once the budget is spent."""
        left = self.left()
        if left <= 0:
            return False
        await asyncio.sleep(min(left, self._wait_s * random.uniform(0.5, 1.0)))
        self._wait_s = min(MAX_WAIT_S, 2 * self._wait_s)
        return True
