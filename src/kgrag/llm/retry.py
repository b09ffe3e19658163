"""Retry with exponential backoff and jitter, honouring Retry-After.

Rate limits (429), server errors (5xx, broken connections) and timeouts are
retried; every other error is raised at once. The sleep happens between
attempts, outside the attempt, so a waiting call holds no concurrency slot.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from kgrag.errors import ModelRateLimitError, ModelServerError, ModelTimeoutError

T = TypeVar("T")
RETRYABLE = (ModelRateLimitError, ModelServerError, ModelTimeoutError)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to wait between attempts."""

    max_retries: int = 6
    base: float = 0.5  # first backoff, seconds
    cap: float = 30.0  # longest backoff, seconds
    max_retry_after: float = 300.0  # longest server-requested wait honoured

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (0-based).

        A server-given ``retry_after`` is honoured (plus up to 10% jitter so
        waiting callers do not return in lockstep); otherwise the backoff is
        ``base * 2**attempt`` capped at ``cap``, jittered into its upper half.
        """
        if retry_after is not None:
            wait = min(max(retry_after, 0.0), self.max_retry_after)
            return wait + random.uniform(0.0, wait * 0.1)
        backoff = min(self.cap, self.base * (2**attempt))
        return random.uniform(backoff / 2, backoff)


async def call_with_retry(policy: RetryPolicy, attempt: Callable[[], Awaitable[T]]) -> T:
    """Await ``attempt()`` until it succeeds or the retries run out.

    Exhausted retries raise the last error's kgrag type (ModelRateLimitError,
    ModelServerError or ModelTimeoutError) chained to it.
    """
    for n in range(policy.max_retries + 1):
        try:
            return await attempt()
        except RETRYABLE as exc:
            if n >= policy.max_retries:
                raise type(exc)(f"{exc} (gave up after {n} retries)") from exc
            await asyncio.sleep(policy.delay(n, getattr(exc, "retry_after", None)))
    raise AssertionError("unreachable")  # pragma: no cover
