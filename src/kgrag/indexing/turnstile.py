"""Lets tasks through one at a time, in a fixed order.

Documents are extracted concurrently but merged into the graph strictly in
enqueue order. That makes the graph a pure function of the inputs: the same
documents give the same graph whatever the concurrency, timing, or the
points at which an earlier run was killed and resumed.

Every index must take its turn exactly once (a document that failed takes
an empty turn), otherwise later turns would wait forever.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class Turnstile:
    """``async with turnstile.turn(i)`` runs only after turns ``0..i-1`` ended."""

    def __init__(self, count: int):
        self._done = [asyncio.Event() for _ in range(count)]

    @asynccontextmanager
    async def turn(self, index: int) -> AsyncIterator[None]:
        if index > 0:
            await self._done[index - 1].wait()
        try:
            yield
        finally:
            self._done[index].set()
