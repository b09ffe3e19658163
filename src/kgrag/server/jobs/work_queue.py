"""One workspace's job queue in this process: its writer, and one task running the jobs in order.

The queue, its writer and its jobs live on a thread of their own with its
own event loop (:class:`~kgrag.server.jobs.thread.JobThread`): the server's
loop only hands jobs over and wakes their waiters, so nothing a job does
(parsing, chunking, embedding, extracting, committing) delays a request.

The writer is a :class:`KGRag` of its own (a second connection to the
index, opened on the first job). Before each job it takes the writer lease
and checks the index's record (:func:`kgrag.server.workspaces.following.behind`):
when a run in another process settled settings the writer lacks, it is
reopened first, so a job never indexes with settings the index has
outgrown. The job runs under that lease.

Every change of a job's state is written to the store
(:mod:`kgrag.server.jobs.record`) before anyone can see it: a submitted job
before its id is answered, a started one before it runs, a finished one
before its waiters wake. A beat writes the running job's progress when it
moved (at most once a second) and every unfinished job's record every
:data:`~kgrag.server.jobs.record.BEAT_S` seconds.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from kgrag.api.facade import KGRag
from kgrag.errors import KGRagError
from kgrag.server.documents import tracks
from kgrag.server.jobs import record as job_record
from kgrag.server.jobs.record import BEAT_S, Job
from kgrag.server.jobs.thread import JobThread, call_in, set_in
from kgrag.server.views import JSONObject
from kgrag.server.workspaces.following import behind

if TYPE_CHECKING:
    from kgrag.config.settings import Settings

log = logging.getLogger(__name__)

JobFn = Callable[[KGRag, Job], Awaitable[JSONObject]]
After = Callable[[KGRag], Coroutine[Any, Any, None]]
PROGRESS_S = 1.0  # the beat's period


class WorkQueue:
    """One workspace's writer and the task that runs its jobs in order."""

    def __init__(self, name: str, settings: Settings, after: After):
        self.name = name
        self.settings = settings
        self._after = after  # runs after every job that succeeded
        self.writer: KGRag | None = None
        self.current: Job | None = None
        self.waiting: deque[Job] = deque()
        self._queue: asyncio.Queue[tuple[Job, JobFn]] = asyncio.Queue()
        self._admitting = asyncio.Lock()  # submissions keep their order
        self._tasks: list[asyncio.Task[None]] = []
        self._written: dict[str, tuple[str, float]] = {}  # job id -> (record, when) last written
        self._thread = JobThread(f"kgrag-jobs-{name}")
        self._home: asyncio.AbstractEventLoop | None = None  # the server's loop

    async def submit(self, job: Job, fn: JobFn) -> Job:
        """Record the job (and its track) in the store, then queue it behind the earlier ones."""
        self._home = asyncio.get_running_loop()
        return await self._thread.call(self._admit(job, fn))

    async def _admit(self, job: Job, fn: JobFn) -> Job:
        async with self._admitting:
            writer = await self._writer()
            if job.track is not None:
                job.track.job_id = job.id
                await tracks.save(writer.storage, job.track)
            await self._record([job])
            self.waiting.append(job)
            self._queue.put_nowait((job, fn))
        if not self._tasks:
            loop = asyncio.get_running_loop()
            self._tasks = [loop.create_task(self._work()), loop.create_task(self._beat())]
        return job

    async def _work(self) -> None:
        while True:
            job, fn = await self._queue.get()
            self.waiting.remove(job)
            self.current = job
            try:
                await self._run(job, fn)
            finally:
                self.current = None

    async def _run(self, job: Job, fn: JobFn) -> None:
        job.status, job.started_at = "running", time.time()
        try:
            await self._record([job])
            async with self._holding() as writer:
                job.result = await fn(writer, job)
            await call_in(self._home or asyncio.get_running_loop(), self._after(writer))
            job.status = "succeeded"
        except asyncio.CancelledError:
            job.status, job.error = "cancelled", "the server stopped before the job ended"
            raise
        except Exception as exc:  # a failed job is recorded, never fatal to the queue
            if not isinstance(exc, KGRagError):
                log.exception("job %s (%s) failed", job.id, job.title)
            job.status, job.error, job.exception = "failed", str(exc) or type(exc).__name__, exc
        finally:
            job.finished_at = time.time()
            await self._finish(job)

    async def _finish(self, job: Job) -> None:
        """Write the ended job's record, then wake its waiters (whatever the store says)."""
        try:
            await self._record([job])
            if self.writer is not None:
                await job_record.prune(self.writer.storage)
        except Exception:
            log.exception("could not record the end of job %s", job.id)
        finally:
            self._written.pop(job.id, None)
            set_in(self._home, job.done)

    async def _record(self, jobs: list[Job]) -> None:
        if self.writer is None or not jobs:
            return
        await job_record.save(self.writer.storage, jobs)
        now = time.time()
        for job in jobs:
            self._written[job.id] = (_text(job), now)

    async def _beat(self) -> None:
        """Write progress that moved, and every unfinished record now and then."""
        while True:
            await asyncio.sleep(PROGRESS_S)
            now = time.time()
            live = [j for j in (self.current, *self.waiting) if j is not None]
            due = [j for j in live if _due(self._written.get(j.id), j, now)]
            try:
                await self._record(due)
            except Exception:  # the next beat tries again
                log.exception("could not record the progress of %s's jobs", self.name)

    @asynccontextmanager
    async def _holding(self) -> AsyncIterator[KGRag]:
        """The writer under its lease, reopened first if the index's record outgrew it."""
        while True:
            writer = await self._writer()
            async with writer.writing():
                if not await behind(writer, self.settings):
                    yield writer
                    return
            await writer.close()
            self.writer = None

    async def _writer(self) -> KGRag:
        if self.writer is None:
            rag = KGRag(self.settings)
            await rag.open(create=True)
            self.writer = rag
        return self.writer

    async def close(self) -> None:
        """Stop the tasks (a running job is cancelled), record what never ran, close the writer."""
        if self._home is None:
            return  # no job was ever submitted: nothing runs, nothing is open
        try:
            await self._thread.call(self._close())
        finally:
            await self._thread.close()

    async def _close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for job in self.waiting:
            job.status, job.error = "cancelled", "the server stopped before the job ran"
            set_in(self._home, job.done)
        try:
            await self._record(list(self.waiting))
        except Exception:
            log.exception("could not record %s's cancelled jobs", self.name)
        if self.writer is not None:
            await self.writer.close()
            self.writer = None


def _text(job: Job) -> str:
    return json.dumps(job.to_dict(), sort_keys=True, default=str)


def _due(written: tuple[str, float] | None, job: Job, now: float) -> bool:
    """Whether ``job``'s record should be written again now."""
    if written is None:
        return True
    text, when = written
    return now - when >= BEAT_S or (
        job is not None and job.status == "running" and text != _text(job)
    )
