"""Background jobs: every write to a workspace runs in one queue, in order.

Each workspace gets a :class:`~kgrag.server.jobs.work_queue.WorkQueue` in this
process: its own writer :class:`KGRag` and one task that runs the jobs
submitted here one at a time, oldest first. The workspace's shared
instance (``ws.rag``) only reads, on its own connection, so a query sees
the index as of the last commit, never a commit in progress; an insert
submitted after a delete runs after it. A job runs in the process that
received it; on a store that several processes share (PostgreSQL) their
jobs take turns through the writer lease.

A :class:`Job` says what it is for, how far it got (:class:`JobProgress`,
the indexer's counts), and once done its result or error; routes return
its id (``GET /jobs/{id}`` awaits it) or await it themselves. Its record
is kept in the workspace's store (:mod:`kgrag.server.jobs.record`), so any
process answers for any job; this process's own jobs answer from memory,
which is as fresh. The last :data:`KEEP` jobs of the process stay in memory.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Annotated, TypeVar

from fastapi import Depends, Request

from kgrag.api.facade import KGRag
from kgrag.server.jobs import record as job_record
from kgrag.server.jobs.record import Job, JobProgress, JobView, new_job_id
from kgrag.server.jobs.work_queue import JobFn, WorkQueue
from kgrag.server.views import JSONObject

Result = TypeVar("Result", bound=Mapping[str, object])

if TYPE_CHECKING:
    from kgrag.server.documents.tracks import Track
    from kgrag.server.workspaces.pool import Workspaces
    from kgrag.storage.base import Storage

__all__ = ["Job", "JobFn", "JobProgress", "Jobs", "WorkQueue", "accepted", "run_in_queue"]

log = logging.getLogger(__name__)

KEEP = 1000  # jobs remembered in memory per process
POLL_S = 0.1  # first wait between reads of another process's job; it grows to MAX_POLL_S
MAX_POLL_S = 1.0


class Jobs:
    """Every workspace's queue, and this process's jobs by id."""

    def __init__(self, workspaces: Workspaces):
        self.workspaces = workspaces
        self._queues: dict[str, WorkQueue] = {}
        self._jobs: OrderedDict[str, Job] = OrderedDict()

    def queue(self, workspace: str) -> WorkQueue:
        if workspace not in self._queues:
            settings = self.workspaces.settings_for(workspace)
            after = functools.partial(self._follow, workspace)
            self._queues[workspace] = WorkQueue(workspace, settings, after)
        return self._queues[workspace]

    async def _follow(self, workspace: str, writer: KGRag) -> None:
        """Serve the workspace from a fresh reader if the job changed what the index records."""
        try:
            await self.workspaces.get(workspace)
        except Exception:  # the job's write stands; the old reader keeps serving
            log.exception("could not reopen workspace %s after a job", workspace)

    async def submit(
        self, workspace: str, kind: str, title: str, fn: JobFn, track: Track | None = None
    ) -> Job:
        """Record ``fn(writer, job)`` in the store and queue it behind the workspace's earlier jobs."""
        job = Job(new_job_id(), workspace, kind, title, track)
        await self.queue(workspace).submit(job, fn)
        self._jobs[job.id] = job
        while len(self._jobs) > KEEP:
            oldest = next(iter(self._jobs.values()))
            if not oldest.finished:
                break
            self._jobs.popitem(last=False)
        return job

    def local(self, workspace: str, job_id: str) -> Job | None:
        """This process's job ``job_id`` if it belongs to ``workspace``."""
        job = self._jobs.get(job_id)
        return job if job is not None and job.workspace == workspace else None

    async def view(
        self, workspace: str, storage: Storage, job_id: str, wait: float = 0.0
    ) -> JobView | None:
        """Job ``job_id`` of ``workspace``, run here or by another process; None if unknown.

        With ``wait``, once it has ended or after that many seconds.
        """
        job = self.local(workspace, job_id)
        if job is not None:
            if wait and not job.finished:
                await job.wait(wait)
            return job.to_dict()
        record = await job_record.load(storage, job_id)
        deadline, delay = time.monotonic() + wait, POLL_S
        while record is not None and not job_record.finished(record):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            await asyncio.sleep(min(delay, left))
            delay = min(delay * 1.5, MAX_POLL_S)
            record = await job_record.load(storage, job_id)
        return record

    async def recent(self, workspace: str, storage: Storage, limit: int) -> list[JobView]:
        """The workspace's jobs, newest first: the store's records, this process's from memory."""
        records = {r["job_id"]: r for r in await job_record.recent(storage, limit)}
        for job in self._jobs.values():
            if job.workspace == workspace and (job.id in records or not job.finished):
                records[job.id] = job.to_dict()
        ordered = sorted(records.values(), key=lambda r: (r["created_at"], r["job_id"]))
        return ordered[::-1][:limit]

    def by_track(self, workspace: str, track_id: str) -> Job | None:
        """This process's job of track ``track_id``, if it ran here."""
        return next(
            (
                j
                for j in reversed(self._jobs.values())
                if j.workspace == workspace and j.track and j.track.track_id == track_id
            ),
            None,
        )

    async def close(self) -> None:
        for queue in self._queues.values():
            await queue.close()
        self._queues.clear()


def jobs_of(request: Request) -> Jobs:
    """The app's :class:`Jobs` (``create_app`` puts it on ``app.state``)."""
    jobs: Jobs = request.app.state.jobs
    return jobs


CurrentJobs = Annotated[Jobs, Depends(jobs_of)]


def accepted(job: Job, status: str, message: str, **extra: object) -> JSONObject:
    """LightRAG's answer to a request whose work runs in the background, plus the job id."""
    track_id = job.track.track_id if job.track else ""
    return {"status": status, "message": message, "track_id": track_id, "job_id": job.id, **extra}


async def run_in_queue(
    jobs: Jobs, workspace: str, title: str, act: Callable[[KGRag], Awaitable[Result]]
) -> Result:
    """Run ``act(writer)`` as a job of the workspace's queue and wait for its result.

    For quick writes whose answer is their result (graph edits): the
    client waits, and the write still takes its turn behind earlier jobs.
    The job's record holds the result as a JSON object; the caller gets it
    as ``act`` typed it.
    """
    results: list[Result] = []

    async def fn(rag: KGRag, job: Job) -> JSONObject:
        results.append(await act(rag))
        return dict(results[-1])

    job = await jobs.submit(workspace, "curate", title, fn)
    await job.outcome()  # the job's error, raised again
    return results[-1]
