"""Reading the documents: paginated listing, status counts, track status, pipeline status.

Everything here reads through the workspace's shared instance, so it
shows committed state; a track's documents that the index does not hold
yet show as ``pending`` while their job waits or runs (in this process or
another one on the same store), refused files as ``failed`` with the
loader's reason. The listings and counts include the files refused at
upload or by the loader (:mod:`kgrag.indexing.rejected`) as ``failed``.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field, field_validator

from kgrag.indexing import rejected as refused
from kgrag.indexing.documents import all_records
from kgrag.server.deps import CurrentWorkspace, Workspace
from kgrag.server.documents import tracks
from kgrag.server.jobs import record as job_record
from kgrag.server.jobs.queues import CurrentJobs, Jobs
from kgrag.server.views import JSONObject
from kgrag.server.views import documents as views
from kgrag.server.views.pipeline import HISTORY, PipelineStatus, pipeline_view
from kgrag.storage.base import Storage
from kgrag.types import DocRecord, DocStatus

router = APIRouter(prefix="/documents", tags=["documents"])

_STATUSES = {s.value for s in DocStatus}


class DocumentsPage(BaseModel):
    """``POST /documents/paginated``: LightRAG's body, plus ``search``."""

    status_filter: str | None = None
    status_filters: list[str] = Field(default_factory=list)
    page: int = Field(1, ge=1)
    page_size: int = Field(50, ge=10, le=200)
    sort_field: Literal["created_at", "updated_at", "id", "file_path"] = "updated_at"
    sort_direction: Literal["asc", "desc"] = "desc"
    search: str = Field("", max_length=1000)

    @field_validator("status_filter", mode="before")
    @classmethod
    def _one(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    @field_validator("status_filters", mode="before")
    @classmethod
    def _many(cls, value: Any) -> Any:  # pydantic's raw input, before validation
        return [v.lower() if isinstance(v, str) else v for v in value or []]

    def request(self) -> views.PageRequest:
        wanted = [*([self.status_filter] if self.status_filter else []), *self.status_filters]
        unknown = [s for s in wanted if s not in _STATUSES]
        if unknown:
            raise HTTPException(422, f"unknown status {unknown[0]!r}; known: {sorted(_STATUSES)}")
        return views.PageRequest(
            wanted,
            self.search.strip(),
            self.page,
            self.page_size,
            self.sort_field,
            self.sort_direction,
        )


async def _listed(storage: Storage) -> list[DocRecord]:
    """The documents, and the refused files as failed ones."""
    records = await all_records(storage)
    return records + await refused.as_records(storage, (r.id for r in records))


@router.post("/paginated")
async def paginated(body: DocumentsPage, ws: CurrentWorkspace) -> JSONObject:
    records = await _listed(ws.rag.storage)
    req = body.request()
    page, total = views.page_of(records, req)
    return {
        "documents": [views.doc_view(r) for r in page],
        "pagination": views.pagination(req.page, req.page_size, total),
        "status_counts": views.status_counts(records),
    }


@router.get("/status_counts")
async def status_counts(ws: CurrentWorkspace) -> JSONObject:
    return {"status_counts": views.status_counts(await _listed(ws.rag.storage))}


@router.get("")
async def documents(ws: CurrentWorkspace) -> JSONObject:
    """LightRAG's older listing: documents grouped by status (at most 1000)."""
    statuses: dict[str, list[views.DocView]] = {}
    for record in (await _listed(ws.rag.storage))[:1000]:
        statuses.setdefault(record.status.value, []).append(views.doc_view(record))
    return {"statuses": statuses}


async def _track(ws: Workspace, jobs: Jobs, track_id: str) -> tuple[tracks.Track, bool]:
    """The track and whether its job has ended (in any process); 404 for an unknown id."""
    job = jobs.by_track(ws.name, track_id)
    if job is not None and job.track is not None:
        return job.track, job.finished
    stored = await tracks.load(ws.rag.storage, track_id)
    if stored is None:
        raise HTTPException(404, f"no track {track_id!r} in workspace {ws.name!r}")
    record = await jobs.view(ws.name, ws.rag.storage, stored.job_id) if stored.job_id else None
    return stored, record is None or job_record.finished(record)


async def _track_docs(ws: Workspace, track: tracks.Track, ended: bool) -> list[views.DocView]:
    records = await ws.rag.storage.doc_status.get_many([p.doc_id for p in track.docs])
    shown = []
    for p in track.docs:
        if p.doc_id in track.errors:
            shown.append(
                views.placeholder_view(
                    p.doc_id, p.file_path, "failed", track.errors[p.doc_id], track.created_at
                )
            )
        elif p.doc_id in records:
            shown.append(views.doc_view(records[p.doc_id], track.track_id))
        elif not ended:
            shown.append(
                views.placeholder_view(p.doc_id, p.file_path, "pending", None, track.created_at)
            )
    return shown


@router.get("/track_status/{track_id}")
async def track_status(track_id: str, ws: CurrentWorkspace, jobs: CurrentJobs) -> JSONObject:
    track, ended = await _track(ws, jobs, track_id.strip())
    docs = await _track_docs(ws, track, ended)
    summary: dict[str, int] = {}
    for d in docs:
        summary[d["status"]] = summary.get(d["status"], 0) + 1
    return {
        "track_id": track.track_id,
        "documents": docs,
        "total_count": len(docs),
        "status_summary": summary,
        "job_id": track.job_id or (j.id if (j := jobs.by_track(ws.name, track.track_id)) else None),
    }


@router.get("/scan/status/{track_id}")
async def scan_status(track_id: str, ws: CurrentWorkspace, jobs: CurrentJobs) -> JSONObject:
    """LightRAG's name for the track status of a scan."""
    return await track_status(track_id, ws, jobs)


@router.get("/pipeline_status", response_model=JSONObject)
async def pipeline_status(ws: CurrentWorkspace, jobs: CurrentJobs) -> PipelineStatus:
    """Whether a job runs in any process on the workspace's store, what waits, what was done."""
    return pipeline_view(await jobs.recent(ws.name, ws.rag.storage, HISTORY))
