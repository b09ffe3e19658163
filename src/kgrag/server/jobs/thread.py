"""An event loop of its own, on a thread of its own, for a workspace's jobs.

The server's event loop answers requests; a job (loading, chunking,
embedding, extracting, committing) runs on a :class:`JobThread`'s loop, so
whatever a job does between two awaits (a CPU-bound step, a library that
blocks) never delays ``/health``, a status poll or a query. Coroutines
cross over with :meth:`JobThread.call` (run there, awaited here) and
:func:`call_in` (the reverse); an :class:`asyncio.Event` of the server's
loop is set from the job's side with :func:`set_in`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")
JOIN_S = 30.0  # how long close waits for the thread to end


class JobThread:
    """A daemon thread running one event loop until :meth:`close`."""

    def __init__(self, name: str):
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The thread's loop, started on first use."""
        if self._loop is None:
            ready = threading.Event()
            loop = asyncio.new_event_loop()
            self._thread = threading.Thread(
                target=_run, args=(loop, ready), name=self.name, daemon=True
            )
            self._thread.start()
            ready.wait()
            self._loop = loop
        return self._loop

    async def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the thread's loop; its result here (cancelling this cancels it)."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    async def close(self) -> None:
        """Stop the loop (after the callbacks already scheduled) and wait for the thread."""
        loop, thread = self._loop, self._thread
        self._loop = self._thread = None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        await asyncio.to_thread(thread.join, JOIN_S)
        if thread.is_alive():
            log.warning("the job thread %s did not stop within %.0f s", self.name, JOIN_S)


def _run(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
    asyncio.set_event_loop(loop)
    loop.call_soon(ready.set)
    try:
        loop.run_forever()
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        loop.close()


async def call_in(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on ``loop`` (another thread's) and wait for it from this one."""
    if loop is asyncio.get_running_loop():
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))


def set_in(loop: asyncio.AbstractEventLoop | None, event: asyncio.Event) -> None:
    """Set ``event`` (of ``loop``) from any thread; at once when the loop is gone."""
    if loop is None or loop.is_closed():
        event.set()
        return
    with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
        loop.call_soon_threadsafe(event.set)
