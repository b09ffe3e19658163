"""``/documents``: LightRAG's insert, upload and scan routes, and kgrag's supersede.

Every route answers at once with LightRAG's ``{status, message, track_id}``
plus ``job_id``; the indexing runs in the workspace's job queue (one job
at a time, in order: :mod:`kgrag.server.jobs.queues`). ``GET /jobs/{job_id}``
awaits it, ``GET /documents/track_status/{track_id}`` shows its
documents. The listing and admin routes are :mod:`.doc_status` and
:mod:`.doc_admin`, ``/jobs`` is :mod:`.jobs` (mounted after these, by
:data:`kgrag.server.app.ROUTERS`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, HTTPException, Request, UploadFile
from pydantic import BaseModel, Field, ValidationError, field_validator
from starlette.datastructures import UploadFile as FormFile

from kgrag.indexing.documents import find_documents
from kgrag.indexing.rejected import Refusal, fresh_id
from kgrag.ingest.ids import source_doc_id
from kgrag.ingest.texts import text_documents
from kgrag.server.deps import CurrentWorkspace, Workspace
from kgrag.server.documents import jobs as doc_jobs
from kgrag.server.documents.tracks import Track, new_track_id
from kgrag.server.documents.uploads import (
    MAX_FILES,
    Refused,
    Saved,
    UploadLimits,
    inputs_of,
    judge_uploads,
    save_upload,
)
from kgrag.server.jobs.queues import CurrentJobs, Job, JobFn, accepted
from kgrag.server.views import JSONObject
from kgrag.types import Document

router = APIRouter(prefix="/documents", tags=["documents"])

MAX_TEXT_CHARS = 50_000_000


class InsertText(BaseModel):
    """``POST /documents/text``: one text, its source name and metadata."""

    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    file_source: str | None = Field(None, max_length=1000)
    metadata: JSONObject | None = None
    id: str | None = Field(None, max_length=1000, description="identity: a later text supersedes")

    @field_validator("text")
    @classmethod
    def _stripped(cls, text: str) -> str:
        if not text.strip():
            raise ValueError("the text is empty")
        return text.strip()


class InsertTexts(BaseModel):
    """``POST /documents/texts``: several texts; sources, metadata and ids one per text."""

    texts: list[str] = Field(min_length=1, max_length=10_000)
    file_sources: list[str] | None = None
    metadata: JSONObject | list[JSONObject] | None = None
    ids: list[str] | None = None

    @field_validator("texts")
    @classmethod
    def _stripped(cls, texts: list[str]) -> list[str]:
        if any(not t.strip() for t in texts):
            raise ValueError("a text is empty")
        return [t.strip() for t in texts]


def _documents(body: InsertTexts) -> list[Document]:
    n = len(body.texts)
    sources = body.file_sources or ["unknown_source"] * n
    if len(sources) < n:  # LightRAG accepts fewer sources than texts
        sources = [*sources, *["unknown_source"] * (n - len(sources))]
    metas = body.metadata if isinstance(body.metadata, list) else [body.metadata or {}] * n
    if len(metas) != n or len(sources) != n or (body.ids is not None and len(body.ids) != n):
        raise HTTPException(422, "give one file source, metadata and id per text (or none)")
    docs = []
    for i, (text, source, meta) in enumerate(zip(body.texts, sources, metas, strict=True)):
        ids = [body.ids[i]] if body.ids else None
        docs += text_documents([text], [source or "unknown_source"], ids, meta)
    return docs


async def _insert(ws: Workspace, jobs: CurrentJobs, docs: list[Document]) -> JSONObject:
    track = Track(new_track_id("insert"))
    for doc in docs:
        track.plan(doc.id, doc.file_path, doc.metadata)
    fn = doc_jobs.index_texts(docs, track)
    job = await jobs.submit(ws.name, "insert", f"Indexing {len(docs)} text(s)", fn, track)
    word = "Text" if len(docs) == 1 else "Texts"
    return accepted(
        job, "success", f"{word} successfully received. Processing will continue in background."
    )


@router.post("/text")
async def insert_text(body: InsertText, ws: CurrentWorkspace, jobs: CurrentJobs) -> JSONObject:
    many = InsertTexts(
        texts=[body.text],
        file_sources=[body.file_source or "unknown_source"],
        metadata=[body.metadata or {}],
        ids=[body.id] if body.id else None,
    )
    return await _insert(ws, jobs, _documents(many))


@router.post("/texts")
async def insert_texts(body: InsertTexts, ws: CurrentWorkspace, jobs: CurrentJobs) -> JSONObject:
    return await _insert(ws, jobs, _documents(body))


def _given(given: list[FormFile]) -> list[FormFile]:
    """The request's files; 400 for none or too many."""
    if not given:
        raise HTTPException(400, "no file uploaded (multipart field 'file' or 'files')")
    if len(given) > MAX_FILES:
        raise HTTPException(400, f"at most {MAX_FILES} files per upload")
    return given


async def _save_one(given: FormFile, ws: Workspace) -> Saved:
    """Store the one file, or refuse it with its 4xx."""
    limits = UploadLimits.from_settings(ws.rag.settings)
    return await save_upload(_given([given])[0], inputs_of(ws), limits)


def _file_job(
    ws: Workspace, saved: list[Saved], replace: str | None = None
) -> tuple[Track, doc_jobs.FileBatch]:
    track = Track(new_track_id("upload"))
    metadata = {}
    for s in saved:
        real = str(s.path.resolve())
        metadata[real] = {"original_name": s.original_name}
        track.plan(source_doc_id(real), s.path.name, metadata[real])
    inputs = inputs_of(ws)
    return track, doc_jobs.FileBatch([s.path for s in saved], inputs, metadata, replace)


def _refusals(track: Track, refused: list[Refused]) -> list[Refusal]:
    """The refused files as failed documents of the track."""
    out = []
    for r in refused:
        out.append(Refusal(fresh_id(), r.original_name, r.reason, track.track_id))
        track.refuse(out[-1].doc_id, r.original_name, r.reason)
    return out


def _all_refused(refused: list[Refused]) -> HTTPException:
    """The error of a request none of whose files was kept (one file: its own status)."""
    statuses = {r.status for r in refused}
    detail = "; ".join(f"{r.original_name!r}: {r.reason}" for r in refused)
    return HTTPException(statuses.pop() if len(statuses) == 1 else 400, detail)


def _answer(job: Job, saved: list[Saved], refused: list[Refused]) -> JSONObject:
    """LightRAG's answer, plus each file's fate: ``accepted`` and ``refused`` (with why)."""
    names = ", ".join(repr(s.original_name) for s in saved)
    message = f"File(s) {names} uploaded successfully. Processing will continue in background."
    if refused:
        message += " Refused: " + "; ".join(f"{r.original_name!r} ({r.reason})" for r in refused)
    return accepted(
        job,
        "partial_success" if refused else "success",
        message,
        files=[s.path.name for s in saved],
        accepted=[{"name": s.original_name, "file": s.path.name} for s in saved],
        refused=[r.to_dict() for r in refused],
    )


@router.post("/upload")
async def upload(
    ws: CurrentWorkspace,
    jobs: CurrentJobs,
    file: Annotated[list[UploadFile] | None, File()] = None,
    files: Annotated[list[UploadFile] | None, File()] = None,
) -> JSONObject:
    """Store the acceptable files under server-chosen names and index them; refuse the others.

    Refused files are listed as failed documents with their reason; when
    no file is kept, the answer is the refusal's 4xx.
    """
    given = _given([*(file or []), *(files or [])])
    limits = UploadLimits.from_settings(ws.rag.settings)
    saved, refused = await judge_uploads(given, inputs_of(ws), limits)
    track, batch = _file_job(ws, saved)
    batch.refusals = _refusals(track, refused)
    title = f"Indexing {len(saved)} uploaded file(s)"
    if not saved:
        fn = doc_jobs.note_refused(batch.refusals, track)
        await jobs.submit(ws.name, "upload", title, fn, track)
        raise _all_refused(refused)
    job = await jobs.submit(ws.name, "upload", title, doc_jobs.index_files(batch, track), track)
    return _answer(job, saved, refused)


@router.post("/scan")
async def scan(ws: CurrentWorkspace, jobs: CurrentJobs) -> JSONObject:
    """Index the input folder: new and changed files (unchanged ones are skipped)."""
    inputs = inputs_of(ws)
    track = Track(new_track_id("scan"))
    batch = doc_jobs.FileBatch([inputs], inputs)
    job = await jobs.submit(
        ws.name, "scan", "Scanning the input folder", doc_jobs.index_files(batch, track), track
    )
    return accepted(
        job, "scanning_started", "Scanning process has been initiated in the background"
    )


class Supersede(BaseModel):
    """``POST /documents/{doc_id}/supersede`` as JSON: the new text."""

    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    file_source: str | None = Field(None, max_length=1000)
    metadata: JSONObject | None = None


async def _supersede_text(request: Request, old: str, ws: Workspace) -> tuple[Track, JobFn]:
    try:
        body = Supersede.model_validate(await request.json())
    except (ValueError, ValidationError) as exc:
        raise HTTPException(422, f"expected JSON {{text, file_source, metadata}}: {exc}") from exc
    if not body.text.strip():
        raise HTTPException(422, "the text is empty")
    docs = text_documents(
        [body.text.strip()], [body.file_source or "unknown_source"], None, body.metadata
    )
    docs[0].replaces = [old]
    track = Track(new_track_id("supersede"))
    track.plan(docs[0].id, docs[0].file_path, docs[0].metadata)
    return track, doc_jobs.index_texts(docs, track)


async def _supersede_file(request: Request, old: str, ws: Workspace) -> tuple[Track, JobFn]:
    async with request.form() as form:
        given = form.get("file")
        if not isinstance(given, FormFile):
            raise HTTPException(422, "the multipart field 'file' must hold the new file")
        saved = [await _save_one(given, ws)]
    track, batch = _file_job(ws, saved, replace=old)
    return track, doc_jobs.index_files(batch, track)


@router.post("/{doc_id}/supersede")
async def supersede(
    doc_id: str, request: Request, ws: CurrentWorkspace, jobs: CurrentJobs
) -> JSONObject:
    """Replace a document by a new text (JSON) or file (multipart ``file``), in one commit."""
    (old,) = await find_documents(ws.rag.storage, [doc_id])
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        track, fn = await _supersede_file(request, old.id, ws)
    else:
        track, fn = await _supersede_text(request, old.id, ws)
    fn = doc_jobs.retiring(fn, old.source or old.file_path, inputs_of(ws))
    job = await jobs.submit(ws.name, "supersede", f"Superseding {old.id}", fn, track)
    return accepted(
        job,
        "success",
        f"Document {old.id} will be superseded. Processing will continue in background.",
    )
