"""LightRAG's pipeline status, from the workspace's job records.

Built from the records every process writes (:mod:`kgrag.server.jobs.record`),
so a server shows the jobs of every process on the same store: ``busy``
while any of them runs one, ``queued`` what waits anywhere, and the
history as the messages of the recent jobs (started, then what they did),
without model endpoints' addresses or server paths.
"""

from __future__ import annotations

import time
from typing import TypedDict

from kgrag.server.access.redact import client_text
from kgrag.server.jobs.record import JobView
from kgrag.server.views.documents import iso

HISTORY = 50  # recent jobs whose messages are shown


def _stamp(ts: float) -> str:
    return f"[{time.strftime('%H:%M:%S', time.localtime(ts))}]"


def _ended(record: JobView) -> str:
    if record["status"] == "succeeded":
        return str((record.get("result") or {}).get("message", "done"))
    if record["status"] == "failed":
        return f"failed: {record.get('error')}"
    return str(record.get("error") or record["status"])


def messages(records: list[JobView]) -> list[str]:
    """What the jobs said, oldest first: each one's start and end."""
    said: list[tuple[float, str]] = []
    for r in records:
        if started := r.get("started_at"):
            said.append((started, f"{_stamp(started)} {r['title']}: started"))
        if finished := r.get("finished_at"):
            said.append((finished, f"{_stamp(finished)} {r['title']}: {_ended(r)}"))
    return [client_text(text) for _, text in sorted(said, key=lambda s: s[0])]


class PipelineStatus(TypedDict):
    """``GET /documents/pipeline_status``: LightRAG's fields, then kgrag's."""

    autoscanned: bool
    busy: bool
    job_name: str
    job_start: str | None
    docs: int
    batchs: int
    cur_batch: int
    request_pending: bool
    latest_message: str
    history_messages: list[str]
    job: JobView | None
    running: list[JobView]
    queued: list[JobView]
    progress: dict[str, int] | None


def pipeline_view(records: list[JobView]) -> PipelineStatus:
    """LightRAG's fields, and kgrag's ``job``, ``queued`` and ``progress`` (records newest first)."""
    oldest_first = records[::-1]
    running = [r for r in oldest_first if r["status"] == "running"]
    queued = [r for r in oldest_first if r["status"] == "queued"]
    job = running[0] if running else None
    history = messages(oldest_first)
    return {
        "autoscanned": False,
        "busy": job is not None,
        "job_name": job["title"] if job else "",
        "job_start": iso(job["started_at"]) if job else None,
        "docs": job["progress"]["documents"] if job else 0,
        "batchs": 1 if job else 0,
        "cur_batch": 1 if job else 0,
        "request_pending": bool(queued),
        "latest_message": history[-1] if history else "",
        "history_messages": history,
        "job": job,
        "running": running,
        "queued": queued,
        "progress": job["progress"] if job else None,
    }
