"""Changing documents: delete (LightRAG's body), clear, disable and enable, reprocess failed.

Deletes run in the workspace's job queue like inserts, so an insert sent
after a delete never loses to it; the answer carries the ``job_id`` to
await (``GET /jobs/{id}``). Disable and enable are quick and answer when
done.
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field, field_validator

from kgrag.indexing import rejected as refused
from kgrag.indexing.documents import all_records
from kgrag.server.deps import CurrentWorkspace
from kgrag.server.documents import jobs as doc_jobs
from kgrag.server.documents.uploads import inputs_of
from kgrag.server.jobs.queues import CurrentJobs, accepted
from kgrag.server.views import JSONObject

router = APIRouter(prefix="/documents", tags=["documents"])


class DocIds(BaseModel):
    """Documents by id (a path or source given at index time names its document too)."""

    doc_ids: list[str] = Field(min_length=1, max_length=10_000)

    @field_validator("doc_ids")
    @classmethod
    def _clean(cls, ids: list[str]) -> list[str]:
        cleaned = [i.strip() for i in ids]
        if any(not i for i in cleaned):
            raise ValueError("a document id is empty")
        if len(set(cleaned)) != len(cleaned):
            raise ValueError("document ids must be unique")
        return cleaned


class DeleteDocs(DocIds):
    """``DELETE /documents/delete_document``: LightRAG's body."""

    delete_file: bool = False
    delete_llm_cache: bool = False


@router.delete("/delete_document")
async def delete_document(body: DeleteDocs, ws: CurrentWorkspace, jobs: CurrentJobs) -> JSONObject:
    fn = doc_jobs.delete_docs(
        body.doc_ids, inputs_of(ws), delete_file=body.delete_file, purge_cache=body.delete_llm_cache
    )
    job = await jobs.submit(ws.name, "delete", f"Deleting {len(body.doc_ids)} document(s)", fn)
    message = (
        f"Document deletion for {len(body.doc_ids)} documents has been initiated. "
        "Processing will continue in background."
    )
    return accepted(job, "deletion_started", message, doc_id=", ".join(body.doc_ids))


@router.delete("")
async def clear_documents(ws: CurrentWorkspace, jobs: CurrentJobs) -> JSONObject:
    """Delete every document the index holds now, and forget refused files (files stay)."""
    ids = [r.id for r in await all_records(ws.rag.storage)]
    ids += [r.doc_id for r in await refused.all_refusals(ws.rag.storage) if r.doc_id not in ids]
    fn = doc_jobs.delete_docs(ids, inputs_of(ws), delete_file=False, purge_cache=False)
    job = await jobs.submit(ws.name, "delete", f"Clearing {len(ids)} document(s)", fn)
    outcome = await job.outcome()
    return {
        "status": "success",
        "message": f"All documents cleared: {outcome['message']}.",
        "job_id": job.id,
    }


async def _toggle(
    body: DocIds, ws: CurrentWorkspace, jobs: CurrentJobs, disabled: bool
) -> JSONObject:
    word = "Disabling" if disabled else "Enabling"
    job = await jobs.submit(
        ws.name,
        "disable",
        f"{word} {len(body.doc_ids)} document(s)",
        doc_jobs.set_disabled(body.doc_ids, disabled),
    )
    return {"status": "success", "job_id": job.id, **await job.outcome()}


@router.post("/disable")
async def disable(body: DocIds, ws: CurrentWorkspace, jobs: CurrentJobs) -> JSONObject:
    """Keep documents indexed but never retrieve from them."""
    return await _toggle(body, ws, jobs, True)


@router.post("/enable")
async def enable(body: DocIds, ws: CurrentWorkspace, jobs: CurrentJobs) -> JSONObject:
    return await _toggle(body, ws, jobs, False)


@router.post("/reprocess_failed")
async def reprocess_failed(ws: CurrentWorkspace, jobs: CurrentJobs) -> JSONObject:
    """Retry failed documents and those with chunk warnings, in the background."""
    job = await jobs.submit(
        ws.name, "reprocess", "Reprocessing failed documents", doc_jobs.reprocess_failed()
    )
    return accepted(
        job,
        "reprocessing_started",
        "Reprocessing of failed documents has been initiated in the background.",
    )
