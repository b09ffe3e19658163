"""A priority semaphore: the concurrency limit shared by the model calls of an instance.

Waiters are served lowest :data:`~kgrag.llm.base.PRIORITY` number first,
first come first served within a priority, so a query's keywords call
overtakes a backlog of extraction calls. A slot handed to a task that is
cancelled before it wakes is passed on, never lost. :class:`Limits` holds
the pair (chat, embed) one instance uses; it is shared only when passed on.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from kgrag.config.settings import Settings


class PriorityLimiter:
    """At most ``limit`` holders at once; waiters ordered by (priority, arrival)."""

    def __init__(self, limit: int, name: str = "llm"):
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.name = name
        self._limit = limit
        self._in_use = 0
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()
        self.max_in_use = 0  # high-water mark, for tests and stats

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def in_use(self) -> int:
        return self._in_use

    @property
    def waiting(self) -> int:
        return sum(1 for _, _, fut in self._waiters if not fut.done())

    def resize(self, limit: int) -> None:
        """Change the limit; a larger one wakes waiters at once."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self._limit = limit
        self._wake()

    def _take(self) -> None:
        self._in_use += 1
        self.max_in_use = max(self.max_in_use, self._in_use)

    def _drop_cancelled(self) -> None:
        while self._waiters and self._waiters[0][2].done():
            heapq.heappop(self._waiters)

    async def acquire(self, priority: int = 10) -> None:
        """Wait for a slot. Pair every successful call with :meth:`release`."""
        self._drop_cancelled()
        if self._in_use < self._limit and not self._waiters:
            self._take()
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (priority, next(self._seq), fut))
        try:
            await fut
        except BaseException:
            if fut.done() and not fut.cancelled():
                self.release()  # granted just before the cancellation: pass it on
            raise

    def release(self) -> None:
        """Give a slot back; the best waiter gets it."""
        if self._in_use <= 0:
            raise RuntimeError(f"limiter {self.name!r} released more often than acquired")
        self._in_use -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self._in_use < self._limit:
            _, _, fut = heapq.heappop(self._waiters)
            if not fut.done():
                self._take()
                fut.set_result(None)

    @asynccontextmanager
    async def slot(self, priority: int = 10) -> AsyncIterator[None]:
        """``async with limiter.slot(p):`` hold one slot for the block."""
        await self.acquire(priority)
        try:
            yield
        finally:
            self.release()


class Limits:
    """The concurrency limits of one kgrag instance: chat (and rerank) calls, embeddings.

    Every :class:`~kgrag.KGRag` builds its own, sized from its settings
    (``llm_max_async``, ``embedding_max_async``), so two instances in one
    process keep their own limits. To share one budget, build a ``Limits``
    and hand the same object to each::

        limits = Limits(chat=4, embed=8)
        a = KGRag(settings_a, limits=limits)
        b = KGRag(settings_b, limits=limits)  # together at most 4 chat calls
    """

    def __init__(self, chat: int | PriorityLimiter = 4, embed: int | PriorityLimiter = 8):
        self.chat = chat if isinstance(chat, PriorityLimiter) else PriorityLimiter(chat, "chat")
        self.embed = (
            embed if isinstance(embed, PriorityLimiter) else PriorityLimiter(embed, "embed")
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        """Fresh limiters sized ``llm_max_async`` and ``embedding_max_async``."""
        return cls(chat=settings.llm.max_async, embed=settings.embedding.max_async)

    def __repr__(self) -> str:
        return f"Limits(chat={self.chat.limit}, embed={self.embed.limit})"
