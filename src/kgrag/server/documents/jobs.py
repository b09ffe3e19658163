"""The jobs behind the document routes: what each does with the workspace's writer.

Each function returns a :data:`~kgrag.server.jobs.queues.JobFn` for
:meth:`Jobs.submit <kgrag.server.jobs.queues.Jobs.submit>`. Every write goes
through the index's one write path (:class:`~kgrag.indexing.service.IndexingService`,
``rag.indexing``), as the Python API's and the CLI's do: files are loaded
in a worker thread (parsing a PDF never stalls the event loop), shown by
their path inside the input folder (never the server's absolute path),
and a file the loader refuses is named in its track with the reason and
kept as a refusal (:mod:`kgrag.indexing.rejected`), like the files refused
at upload: the documents listing shows them as failed, ``kgrag status``
lists the files among its refused inputs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgrag.errors import ConfigError, DocumentNotFoundError
from kgrag.indexing import rejected
from kgrag.indexing.documents import find_documents
from kgrag.indexing.rejected import Refusal
from kgrag.indexing.report import IndexReport
from kgrag.indexing.service import IndexRequest
from kgrag.ingest.names import display_name
from kgrag.server.documents import tracks
from kgrag.server.documents.uploads import inside
from kgrag.server.views import JSONObject

if TYPE_CHECKING:
    from kgrag.api.facade import KGRag
    from kgrag.errors import LoaderError
    from kgrag.ingest.loaders import LoadReport
    from kgrag.server.documents.tracks import Track
    from kgrag.server.jobs.queues import Job, JobFn
    from kgrag.types import Document


@dataclass(slots=True)
class FileBatch:
    """Files (or folders) to index, shown relative to ``inputs``."""

    paths: list[Path]
    inputs: Path
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)  # by resolved path
    replace: str | None = None  # the document id one new file supersedes
    refusals: list[Refusal] = field(default_factory=list)  # files not kept at upload


def report_result(report: IndexReport) -> JSONObject:
    """What an indexing job did, for ``GET /jobs/{id}``."""
    failed = [{"doc_id": d, "file_path": f, "error": e} for d, f, e in report.failed]
    message = (
        f"{len(report.processed)} processed, {len(failed)} failed, "
        f"{len(report.unchanged)} unchanged, {len(report.load_errors)} refused"
    )
    return {
        "message": message,
        "new": report.new,
        "updated": report.updated,
        "moved": report.moved,
        "unchanged": report.unchanged,
        "processed": report.processed,
        "failed": failed,
        "load_errors": report.load_errors,
    }


async def _save_track(rag: KGRag, track: Track | None, job: Job) -> None:
    if track is not None:
        track.job_id = job.id
        await rag.indexing.write("track", lambda ix: tracks.save(ix.storage, track))


def index_texts(docs: list[Document], track: Track) -> JobFn:
    """Index raw texts (already made into documents)."""

    async def run(rag: KGRag, job: Job) -> JSONObject:
        try:
            request = IndexRequest(documents=docs, progress=job.progress, resume=False)
            return report_result(await rag.indexing.index(request))
        finally:
            await _save_track(rag, track, job)

    return run


def _shaper(batch: FileBatch, track: Track) -> Callable[[LoadReport], list[Refusal]]:
    """What the loading thread does with a batch: paths inside the input folder, the track."""
    root = batch.inputs.resolve()

    def shown(error: LoaderError) -> str:
        real = str(Path(error.path).resolve())
        return display_name(os.path.relpath(real, root) if inside(root, real) else Path(real).name)

    def shape(loaded: LoadReport) -> list[Refusal]:
        for doc in loaded.documents:
            source = doc.source or doc.file_path
            doc.file_path = os.path.relpath(source, root) if inside(root, source) else doc.file_path
            doc.metadata = dict(batch.metadata.get(source, {}))
            track.plan(doc.id, doc.file_path, doc.metadata)
        refusals = rejected.refusals_of(loaded, shown, track.track_id)
        for error, refusal in zip(loaded.errors, refusals, strict=True):
            track.refuse(refusal.doc_id, shown(error), error.reason)
            real = str(Path(error.path).resolve())
            name = batch.metadata.get(real, {}).get("original_name")
            batch.refusals.append(replace(refusal, file_path=name) if name else refusal)
        if batch.replace is not None:
            if len(loaded.documents) != 1:
                raise ConfigError(
                    "the new file could not be loaded: " + "; ".join(track.errors.values())
                )
            loaded.documents[0].replaces = [batch.replace]
        return batch.refusals

    return shape


def index_files(batch: FileBatch, track: Track) -> JobFn:
    """Load and index files; with ``batch.replace``, the one file supersedes that document."""

    async def run(rag: KGRag, job: Job) -> JSONObject:
        try:
            request = IndexRequest(
                batch.paths, progress=job.progress, shape=_shaper(batch, track), resume=False
            )
            report = await rag.indexing.index(request)
            # Named as the track names them (inside the input folder), never by server path.
            report.load_errors = [
                f"{p.file_path}: {track.errors[p.doc_id]}"
                for p in track.docs
                if p.doc_id in track.errors
            ]
            return report_result(report)
        finally:
            await _save_track(rag, track, job)

    return run


def note_refused(refusals: list[Refusal], track: Track) -> JobFn:
    """Remember files refused at upload when none of the request's files was kept."""

    async def run(rag: KGRag, job: Job) -> JSONObject:
        try:
            await rag.indexing.write("refuse", lambda ix: rejected.note(ix.storage, refusals))
            return {"message": f"0 processed, {len(refusals)} refused", "processed": []}
        finally:
            await _save_track(rag, track, job)

    return run


async def _found(rag: KGRag, ids: list[str]) -> tuple[list[str], list[str]]:
    """(ids found, ids not found); a given path or source stands for its document."""
    found, missing = [], []
    for given in ids:
        try:
            found += [r.id for r in await find_documents(rag.storage, [given])]
        except DocumentNotFoundError:
            missing.append(given)
    return list(dict.fromkeys(found)), missing


def _remove_files(sources: list[str], inputs: Path) -> list[str]:
    removed = []
    for source in sources:
        path = inside(inputs, source)
        if path is not None and path.is_file():
            path.unlink()
            removed.append(os.path.relpath(path, inputs.resolve()))
    return removed


def delete_docs(ids: list[str], inputs: Path, *, delete_file: bool, purge_cache: bool) -> JobFn:
    """Delete documents; with ``delete_file``, their files inside the input folder too."""

    async def run(rag: KGRag, job: Job) -> JSONObject:
        # refused files: only a record
        forgotten = await rag.indexing.write("forget", lambda ix: rejected.forget(ix.storage, ids))
        found, missing = await _found(rag, [i for i in ids if i not in forgotten])
        records = await rag.storage.doc_status.get_many(found)
        deleted: list[str] = []
        if found:
            deleted, _ = await rag.delete(found, purge_cache=purge_cache)
        deleted += forgotten
        sources = [r.source or r.file_path for r in records.values()]
        files = _remove_files(sources, inputs) if delete_file else []
        return {
            "message": f"{len(deleted)} deleted, {len(missing)} not found",
            "deleted": deleted,
            "not_found": missing,
            "files_deleted": files,
        }

    return run


def retiring(fn: JobFn, old_source: str | None, inputs: Path) -> JobFn:
    """``fn`` (a supersede), then the old version's file leaves the input folder.

    Else the next scan would find the old file and index it again.
    """

    async def run(rag: KGRag, job: Job) -> JSONObject:
        result = await fn(rag, job)
        if result.get("processed") and old_source:
            result["files_deleted"] = _remove_files([old_source], inputs)
        return result

    return run


def set_disabled(ids: list[str], disabled: bool) -> JobFn:
    """Disable (or enable) documents."""

    async def run(rag: KGRag, job: Job) -> JSONObject:
        found, missing = await _found(rag, ids)
        changed = await rag.set_disabled(found, disabled) if found else []
        word = "disabled" if disabled else "enabled"
        return {"message": f"{len(changed)} {word}", word: changed, "not_found": missing}

    return run


def reprocess_failed() -> JobFn:
    """Retry failed documents and those with chunk warnings."""

    async def run(rag: KGRag, job: Job) -> JSONObject:
        return report_result(await rag.retry_failed(progress=job.progress))

    return run
