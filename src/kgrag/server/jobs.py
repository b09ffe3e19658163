"""Background jobs: every write to a workspace runs in one queue, in order.

Each workspace gets a :class:`WorkQueue`: its own writer :class:`KGRag` (a
second connection to the index, opened on the first job) and one asyncio
task that runs the jobs submitted to it one at a time, oldest first. The
workspace's shared instance (``ws.rag``) only reads, on its own
connection, so a query sees the index as of the last commit, never a
commit in progress; an insert submitted after a delete runs after it.
When a job changed what the index records about itself (the first run
settles the language), the shared instance is reopened so readers follow.

A :class:`Job` says what it is for, how far it got (:class:`JobProgress`,
the indexer's counts), and once done its result or error; routes return
its id (``GET /jobs/{id}`` awaits it) or await it themselves. The last
:data:`KEEP` jobs of the process are remembered.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, Request

from kgrag.api import KGRag
from kgrag.errors import KGRagError
from kgrag.manifest import REMEMBERED
from kgrag.pipeline.progress import ProgressCounts

if TYPE_CHECKING:
    from kgrag.server.tracks import Track
    from kgrag.server.workspaces import Workspaces

log = logging.getLogger(__name__)

KEEP = 1000  # jobs remembered per process
MESSAGES = 500  # recent messages kept per workspace
JobFn = Callable[[KGRag, "Job"], Awaitable[dict[str, Any]]]


class JobProgress(ProgressCounts):
    """The indexer's counts for a job (a :class:`~kgrag.pipeline.progress.ProgressSink`)."""

    __slots__ = ()

    def stop(self) -> None:
        pass


@dataclass(slots=True, eq=False)
class Job:
    """One write to a workspace: queued, running, then succeeded or failed."""

    id: str
    workspace: str
    kind: str  # insert, upload, scan, delete, supersede, reprocess, curate, ...
    title: str  # one line for the pipeline status
    track: Track | None = None
    status: str = "queued"
    created_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    progress: JobProgress = field(default_factory=JobProgress)
    result: dict[str, Any] | None = None
    error: str | None = None
    exception: BaseException | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def finished(self) -> bool:
        return self.done.is_set()

    async def wait(self, seconds: float | None = None) -> bool:
        """Wait until the job ends (at most ``seconds``); whether it has."""
        try:
            await asyncio.wait_for(asyncio.shield(self.done.wait()), seconds)
        except TimeoutError:
            return False
        return True

    async def outcome(self) -> dict[str, Any]:
        """Wait for the job; its result, or its error raised again."""
        await self.done.wait()
        if self.exception is not None:
            raise self.exception
        return self.result or {}

    def to_dict(self) -> dict[str, Any]:
        return {
            "job_id": self.id,
            "kind": self.kind,
            "title": self.title,
            "status": self.status,
            "track_id": self.track.track_id if self.track else None,
            "created_at": self.created_at,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "progress": self.progress.to_dict(),
            "result": self.result,
            "error": self.error,
        }


class WorkQueue:
    """One workspace's writer and the task that runs its jobs in order."""

    def __init__(
        self, name: str, rag: Callable[[], KGRag], after: Callable[[KGRag], Awaitable[None]]
    ):
        self.name = name
        self._make = rag
        self._after = after  # runs after every job that succeeded
        self.writer: KGRag | None = None
        self.current: Job | None = None
        self.waiting: deque[Job] = deque()
        self.messages: deque[str] = deque(maxlen=MESSAGES)
        self._queue: asyncio.Queue[tuple[Job, JobFn]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def submit(self, job: Job, fn: JobFn) -> Job:
        self.waiting.append(job)
        self._queue.put_nowait((job, fn))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._work())
        return job

    def say(self, message: str) -> None:
        self.messages.append(f"[{time.strftime('%H:%M:%S')}] {message}")

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
        self.say(f"{job.title}: started")
        try:
            writer = await self._writer()
            job.result = await fn(writer, job)
            await self._after(writer)
            job.status = "succeeded"
            self.say(f"{job.title}: {job.result.get('message', 'done')}")
        except asyncio.CancelledError:
            job.status, job.error = "cancelled", "the server stopped before the job ended"
            raise
        except Exception as exc:  # a failed job is recorded, never fatal to the queue
            if not isinstance(exc, KGRagError):
                log.exception("job %s (%s) failed", job.id, job.title)
            job.status, job.error, job.exception = "failed", str(exc) or type(exc).__name__, exc
            self.say(f"{job.title}: failed: {job.error}")
        finally:
            job.finished_at = time.time()
            job.done.set()

    async def _writer(self) -> KGRag:
        if self.writer is None:
            rag = self._make()
            await rag.open(create=True)
            self.writer = rag
        return self.writer

    async def close(self) -> None:
        """Stop the task (a running job is cancelled) and close the writer."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        for job in self.waiting:
            job.status, job.error = "cancelled", "the server stopped before the job ran"
            job.done.set()
        if self.writer is not None:
            await self.writer.close()
            self.writer = None


class Jobs:
    """Every workspace's queue, and the jobs of this process by id."""

    def __init__(self, workspaces: Workspaces):
        self.workspaces = workspaces
        self._queues: dict[str, WorkQueue] = {}
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._retired: list[KGRag] = []  # readers replaced while requests may use them

    def queue(self, workspace: str) -> WorkQueue:
        if workspace not in self._queues:
            folder = self.workspaces.folder(workspace)
            settings = self.workspaces.settings.with_overrides(workdir=folder)
            after = functools.partial(self._follow, workspace)
            self._queues[workspace] = WorkQueue(workspace, lambda: KGRag(settings), after)
        return self._queues[workspace]

    async def _follow(self, workspace: str, writer: KGRag) -> None:
        """Reopen the reader when the writer's run changed what the index records."""
        try:
            reader = await self.workspaces.get(workspace)
            if any(getattr(reader.settings, f) != getattr(writer.settings, f) for f in REMEMBERED):
                old = await self.workspaces.reopen(workspace)
                if old is not None:
                    self._retired.append(old)
        except Exception:  # the job's write stands; the old reader keeps serving
            log.exception("could not reopen workspace %s after a job", workspace)

    def submit(
        self, workspace: str, kind: str, title: str, fn: JobFn, track: Track | None = None
    ) -> Job:
        """Queue ``fn(writer, job)`` behind the workspace's earlier jobs."""
        job = Job("job-" + secrets.token_hex(8), workspace, kind, title, track)
        self._jobs[job.id] = job
        while len(self._jobs) > KEEP:
            oldest = next(iter(self._jobs.values()))
            if not oldest.finished:
                break
            self._jobs.popitem(last=False)
        return self.queue(workspace).submit(job, fn)

    def get(self, workspace: str, job_id: str) -> Job | None:
        """The job ``job_id`` if it belongs to ``workspace``."""
        job = self._jobs.get(job_id)
        return job if job is not None and job.workspace == workspace else None

    def recent(self, workspace: str) -> list[Job]:
        """The workspace's remembered jobs, newest first."""
        return [j for j in reversed(self._jobs.values()) if j.workspace == workspace]

    def by_track(self, workspace: str, track_id: str) -> Job | None:
        return next(
            (j for j in self.recent(workspace) if j.track and j.track.track_id == track_id), None
        )

    async def close(self) -> None:
        for queue in self._queues.values():
            await queue.close()
        self._queues.clear()
        for rag in self._retired:
            await rag.close()
        self._retired.clear()


def jobs_of(request: Request) -> Jobs:
    """The app's :class:`Jobs` (``create_app`` puts it on ``app.state``)."""
    jobs: Jobs = request.app.state.jobs
    return jobs


CurrentJobs = Annotated[Jobs, Depends(jobs_of)]


def accepted(job: Job, status: str, message: str, **extra: Any) -> dict[str, Any]:
    """LightRAG's answer to a request whose work runs in the background, plus the job id."""
    track_id = job.track.track_id if job.track else ""
    return {"status": status, "message": message, "track_id": track_id, "job_id": job.id, **extra}


async def run_in_queue(
    jobs: Jobs, workspace: str, title: str, act: Callable[[KGRag], Awaitable[dict[str, Any]]]
) -> dict[str, Any]:
    """Run ``act(writer)`` as a job of the workspace's queue and wait for its result.

    For quick writes whose answer is their result (graph edits): the
    client waits, and the write still takes its turn behind earlier jobs.
    """

    async def fn(rag: KGRag, job: Job) -> dict[str, Any]:
        return await act(rag)

    return await jobs.submit(workspace, "curate", title, fn).outcome()
