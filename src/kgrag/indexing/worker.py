"""A worker: takes documents from a workspace's work queue and indexes them.

Any number of workers, in any number of processes and machines, may work
on one workspace (``kgrag worker``). Each keeps ``concurrency`` documents in
flight: a slot claims one document (a lease, see
:mod:`kgrag.storage.postgres.queue`), prepares it (extraction, embedding),
and commits it through the same :class:`~kgrag.indexing.changes.ChangeApplier`
as a single process does, inside ``Storage.serial()``. The graph is a
function of the live documents, so which worker merged what, and when,
does not change it.

- A lease is renewed while its document is worked on; a worker that dies
  stops renewing, and once the lease expires another worker claims the
  document again (the dead worker committed nothing of it: a commit is one
  transaction, and it checks the lease first).
- A document that fails goes back to the queue after ``retry_after_s`` and
  is given up (``failed``, the dead letter) after ``max_attempts`` tries;
  ``kgrag retry`` tries it again later.
- When the queue has run dry (nothing pending, no document leased by any
  worker), the workers write the deferred summaries, each a share of the
  keys (:meth:`~kgrag.indexing.changes.ChangeApplier.finish`): summarising
  while another worker still commits documents would summarise the keys
  those touch twice. ``exit_when_idle`` then ends it once nothing is left.

A worker survives its database going away (a restart, a network cut):
the store waits for it with a bounded backoff (``postgres_reconnect_s``).
A document whose commit broke with the connection
(:class:`~kgrag.errors.ConnectionLostError`) committed nothing: the worker
runs it again, from a copy of its record as claimed, while its lease is
its own (renewed as soon as the database answers; if the lease expired
meanwhile and another worker took the document, the commit is refused and
the document is dropped). A database that stays away past the budget
(:class:`~kgrag.errors.DatabaseUnavailableError`), or any other error
that escapes a slot, cancels the worker's other slots and ends it with
that one error; leases are released on the way out (Ctrl-C and SIGTERM
too), so no document waits for its lease to expire.

Workers hold the writer lease *shared*: operations on the whole workspace
(rebuild, repair) wait for them, and they for those.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kgrag.errors import ConnectionLostError, DatabaseUnavailableError
from kgrag.indexing.indexer import Indexer, TurnHooks, describe_error
from kgrag.storage.capabilities import Capability, feature
from kgrag.types import DocRecord, DocStatus

if TYPE_CHECKING:
    from kgrag.storage.base import Storage, WorkQueue

_REDO_MAX = 5  # runs of one document undone by connection losses before it counts as failed
_NO_QUEUE = "workers need storage = postgres (the embedded store has one writer: use kgrag index)"


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    """How a worker takes and keeps its documents."""

    concurrency: int = 8  # documents in flight: more than LLM slots, so none idles
    lease_s: float = 60.0  # a lease not renewed for this long expires
    poll_s: float = 1.0  # wait between looks at an empty queue
    max_attempts: int = 3  # tries before a document is given up
    retry_after_s: float = 5.0  # a failed document waits this long before its next try
    exit_when_idle: bool = False


@dataclass
class WorkerReport:
    owner: str
    processed: list[str] = field(default_factory=list)
    retried: list[str] = field(default_factory=list)  # failed, back in the queue
    given_up: list[tuple[str, str]] = field(default_factory=list)  # (doc id, error)
    lost: list[str] = field(default_factory=list)  # leases another worker took over
    summaries: int = 0
    seconds: float = 0.0


def worker_name() -> str:
    """A name no other worker has: host, pid and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class QueueHooks(TurnHooks):
    """Record writes that hold only while this worker's lease does."""

    def __init__(self, storage: Storage, queue: WorkQueue, worker: Worker):
        super().__init__(storage)
        self.queue, self.worker = queue, worker

    async def started(self, record: DocRecord) -> None:
        await self.queue.started(self.worker.owner, record)

    async def guard(self, record: DocRecord) -> None:
        await self.queue.guard(self.worker.owner, record.id)

    async def failed(self, record: DocRecord, error: BaseException) -> None:
        if isinstance(error, DatabaseUnavailableError):
            raise error  # the database is gone: the worker stops
        if isinstance(error, ConnectionLostError) and self.worker.again(record.id):
            return  # nothing of it was committed: the worker runs it again
        await self.worker.fail(record, describe_error(error))


class Worker:
    """One worker process's loop (see the module docstring)."""

    def __init__(self, indexer: Indexer, options: WorkerOptions, owner: str | None = None):
        self.indexer, self.storage = indexer, indexer.storage
        self.queue = feature(self.storage, Capability.WORK_QUEUE, _NO_QUEUE).queue
        self.options = options
        self.owner = owner or worker_name()
        self.report = WorkerReport(self.owner)
        self._attempts: dict[str, int] = {}
        self._held: set[str] = set()
        self._redo: dict[str, int] = {}  # doc id -> runs undone by a connection loss
        self._again: set[str] = set()  # documents to run again now
        self.hooks = QueueHooks(self.storage, self.queue, self)

    async def run(self) -> WorkerReport:
        started = time.perf_counter()
        async with self.storage.writer(shared=True), self._renewing():
            try:
                while True:
                    try:
                        await self._round()
                    except ConnectionLostError:  # a transaction broke: its work runs again
                        await self.queue.release_all(self.owner)  # what the slots left
                    else:
                        if self.options.exit_when_idle and await self._idle():
                            break
                    await asyncio.sleep(self.options.poll_s)
            finally:
                with contextlib.suppress(Exception):
                    await asyncio.shield(self.queue.release_all(self.owner))
        self.report.seconds = time.perf_counter() - started
        return self.report

    async def _round(self) -> None:
        """Every slot until the queue is dry; then a share of the summaries."""
        try:
            async with asyncio.TaskGroup() as group:  # one failing slot cancels the others
                for _ in range(self.options.concurrency):
                    group.create_task(self._slot())
        except BaseExceptionGroup as failed:
            raise first_error(failed) from None
        counts = await self.queue.counts()
        if counts.pending == counts.leased == 0:  # others' documents touch keys too
            await self._finish()

    async def _slot(self) -> None:
        """Claim and process documents one at a time until none is left to claim."""
        while claimed := await self.queue.claim(self.owner, 1, self.options.lease_s):
            for record, attempt in claimed:
                self._attempts[record.id] = attempt
                if attempt > self.options.max_attempts:
                    await self.fail(record, "its worker stopped before finishing (lease expired)")
                    self._attempts.pop(record.id, None)
                    continue
                self._held.add(record.id)
                try:
                    await self._process(record)
                finally:
                    self._held.discard(record.id)
                    self._attempts.pop(record.id, None)
                    self._redo.pop(record.id, None)

    async def _process(self, claimed: DocRecord) -> None:
        """Index one claimed document; again while a connection loss undoes it."""
        while True:
            record = copy.deepcopy(claimed)  # the indexer changes the record it is given
            # its model calls count for the document (the indexer's task context)
            done = await self.indexer.process_records([record], self.hooks)
            self.report.processed += done.processed
            self.report.lost += done.lost
            if record.id not in self._again:
                return
            self._again.discard(record.id)

    def again(self, doc_id: str) -> bool:
        """Mark a document undone by a connection loss for another run (a few at most)."""
        runs = self._redo.get(doc_id, 0)
        if runs >= _REDO_MAX:
            return False
        self._redo[doc_id] = runs + 1
        self._again.add(doc_id)
        return True

    async def fail(self, record: DocRecord, error: str) -> None:
        """Back to the queue for another try, or given up after the last one."""
        attempt = self._attempts.get(record.id, self.options.max_attempts)
        record.updated_at = time.time()
        if attempt < self.options.max_attempts:
            record.status, record.error = DocStatus.PENDING, f"attempt {attempt}: {error}"
            if await self.queue.settle(self.owner, record, self.options.retry_after_s):
                self.report.retried.append(record.id)
            return
        record.status = DocStatus.FAILED
        record.error = f"{error} (gave up after {attempt} attempt(s))"
        if await self.queue.settle(self.owner, record, None):
            self.report.given_up.append((record.id, record.error))

    async def _finish(self) -> None:
        """This worker's share of the deferred summaries (workers split them by key)."""
        self.report.summaries += await self.indexer.applier.finish()

    async def _idle(self) -> bool:
        counts = await self.queue.counts()
        pending = await self.indexer.applier.pending.count()
        return counts.pending == counts.leased == counts.expired == pending == 0

    @contextlib.asynccontextmanager
    async def _renewing(self) -> AsyncIterator[None]:
        """Renew the leases of the documents in flight, every third of a lease."""

        async def renew() -> None:
            while True:
                await asyncio.sleep(self.options.lease_s / 3)
                with contextlib.suppress(Exception):  # the next round tries again
                    await self.queue.renew(self.owner, sorted(self._held), self.options.lease_s)

        task = asyncio.create_task(renew())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def first_error(group: BaseExceptionGroup) -> BaseException:
    """The first error of a task group's that is not a cancellation (nested groups flattened)."""
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            exc = first_error(exc)
        if not isinstance(exc, asyncio.CancelledError):
            return exc
    return group.exceptions[0]
