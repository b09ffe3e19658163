"""``/jobs``: the workspace's background jobs, and awaiting one.

``GET /jobs/{job_id}?wait=S`` answers when the job has ended or after
``S`` seconds (at most 60), whichever comes first; ``status`` is then
``queued``, ``running``, ``succeeded``, ``failed`` or ``cancelled``. A
job of another workspace is 404, as an unknown one. Any server process on
the workspace's store answers for a job another one runs (its record is
in the store); a job whose process stopped before it ended reads as
``cancelled``. A job's error and result are shown without model
endpoints' addresses or server paths (:func:`kgrag.server.access.redact.scrubbed`).
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Query

from kgrag.server.access.redact import scrubbed
from kgrag.server.deps import CurrentWorkspace
from kgrag.server.jobs.queues import CurrentJobs
from kgrag.server.views import JSONObject

router = APIRouter(prefix="/jobs", tags=["jobs"])


@router.get("")
async def recent_jobs(
    ws: CurrentWorkspace, jobs: CurrentJobs, limit: int = Query(50, ge=1, le=1000)
) -> JSONObject:
    """The workspace's jobs, newest first."""
    return {"jobs": scrubbed(await jobs.recent(ws.name, ws.rag.storage, limit))}


@router.get("/{job_id}")
async def get_job(
    job_id: str,
    ws: CurrentWorkspace,
    jobs: CurrentJobs,
    wait: float = Query(0.0, ge=0.0, le=60.0, description="seconds to wait for the job to end"),
) -> JSONObject:
    job = await jobs.view(ws.name, ws.rag.storage, job_id, wait)
    if job is None:
        raise HTTPException(404, f"no job {job_id!r} in workspace {ws.name!r}")
    shown: JSONObject = scrubbed(job)
    return shown
