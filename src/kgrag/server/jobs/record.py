"""A background job, and its record in the workspace's store.

A :class:`Job` lives in the process that runs it (its queue, its progress,
the event its waiters await). Its record, :meth:`Job.to_dict` plus
``seen_at``, is written to the workspace's ``server_jobs`` key-value
namespace when the job is submitted, when it starts, while its progress
moves and when it ends, so every server process on the same store answers
for every job (a client behind a load balancer uploads on one process and
polls another). An unfinished record its process has not written for
:data:`STALE_S` seconds belongs to a process that stopped: it reads as
``cancelled``. The newest :data:`KEEP` records of a workspace are kept.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from kgrag.indexing.progress import ProgressCounts
from kgrag.server.views import JSONObject
from kgrag.storage.layout import SERVER_JOBS
from kgrag.storage.layout.rows import JobFields, JobRow
from kgrag.storage.layout.typed import TypedKV

if TYPE_CHECKING:
    from kgrag.server.documents.tracks import Track
    from kgrag.storage.base import Storage

NAMESPACE = SERVER_JOBS
KEEP = 1000  # records kept per workspace
BEAT_S = 10.0  # an unfinished job's record is written at least this often
STALE_S = 60.0  # ... so one older than this was left by a process that stopped
UNFINISHED = ("queued", "running")
LOST = "the server process running the job stopped before it ended"


JobView = JobFields
"""A job as ``GET /jobs/{id}`` shows it: its stored :class:`JobRow` less ``seen_at``."""


def new_job_id() -> str:
    """``job-`` and the time in ms (hex), then random: ids sort by when they were made."""
    return f"job-{time.time_ns() // 1_000_000:012x}{secrets.token_hex(4)}"


class JobProgress(ProgressCounts):
    """The indexer's counts for a job (a :class:`~kgrag.indexing.progress.ProgressSink`)."""

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
    result: JSONObject | None = None
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

    async def outcome(self) -> JSONObject:
        """Wait for the job; its result, or its error raised again."""
        await self.done.wait()
        if self.exception is not None:
            raise self.exception
        return self.result or {}

    def to_dict(self) -> JobView:
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


def finished(record: JobView) -> bool:
    return record.get("status") not in UNFINISHED


def shown(value: JobRow, now: float | None = None) -> JobView:
    """A stored record as ``GET /jobs/{id}`` shows it (a lost job as ``cancelled``)."""
    record = cast(JobView, {k: v for k, v in value.items() if k != "seen_at"})
    seen = float(value.get("seen_at") or 0.0)
    if not finished(record) and (time.time() if now is None else now) - seen > STALE_S:
        record["status"], record["error"] = "cancelled", LOST
    return record


def _records(storage: Storage) -> TypedKV[JobRow]:
    return TypedKV(storage.kv(NAMESPACE), JobRow)


async def save(storage: Storage, jobs: Iterable[Job]) -> None:
    now = time.time()
    items: dict[str, JobRow] = {job.id: {**job.to_dict(), "seen_at": now} for job in jobs}
    if items:
        await _records(storage).upsert(items)


async def load(storage: Storage, job_id: str) -> JobView | None:
    value = await _records(storage).get(job_id)
    return shown(value) if value else None


async def recent(storage: Storage, limit: int) -> list[JobView]:
    """The workspace's newest ``limit`` records, newest first."""
    kv = _records(storage)
    keys = sorted(await kv.keys())[-limit:]
    records = [shown(v) for v in await kv.get_many(keys) if v]
    return sorted(records, key=lambda r: (r["created_at"], r["job_id"]), reverse=True)


async def prune(storage: Storage, keep: int = KEEP) -> None:
    """Delete the oldest finished records past the newest ``keep``."""
    if await storage.kv(NAMESPACE).count() <= keep:
        return
    kv = _records(storage)
    keys = sorted(await kv.keys())
    old = keys[: len(keys) - keep]
    values = await kv.get_many(old)
    await kv.delete([k for k, v in zip(old, values, strict=True) if not v or finished(shown(v))])
