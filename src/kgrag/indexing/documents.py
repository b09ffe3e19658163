"""Find, delete, disable and list documents."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypedDict

from kgrag.errors import AmbiguousNameError, DocumentNotFoundError
from kgrag.indexing.changes import Change, ChangeApplier, ChangeStats
from kgrag.ingest.names import display_name, document_name, records_named
from kgrag.types import DocRecord, DocStatus

if TYPE_CHECKING:
    from kgrag.storage.base import Storage


async def all_records(storage: Storage) -> list[DocRecord]:
    """Every document record, in queue order."""
    return await storage.doc_status.by_status(*DocStatus)


def _path_match(record: DocRecord, pattern: str) -> bool:
    paths = {p for p in (record.source, record.file_path) if p}
    absolute = os.path.abspath(pattern) if not os.path.isabs(pattern) else pattern
    return any(fnmatch.fnmatchcase(p, pattern) or fnmatch.fnmatchcase(p, absolute) for p in paths)


async def find_documents(
    storage: Storage, ids: Iterable[str] = (), paths: Iterable[str] = ()
) -> list[DocRecord]:
    """The records named by ``ids`` (ids, sources, file paths or listed names) and path globs.

    A name is matched as :func:`kgrag.ingest.names.records_named` says. Raises
    :class:`AmbiguousNameError` for a name several documents answer to, and
    :class:`DocumentNotFoundError` naming everything that matched nothing.
    """
    ids, paths = list(ids), list(paths)
    records = await all_records(storage) if ids or paths else []
    found: dict[str, DocRecord] = {}
    missing: list[str] = []
    for given in ids:
        hits = records_named(given, records)
        if len(hits) > 1:
            raise AmbiguousNameError(_ambiguous(given, hits))
        if not hits:
            missing.append(given)
        found.update((r.id, r) for r in hits)
    for pattern in paths:
        hits = [r for r in records if _path_match(r, pattern)]
        if not hits:
            missing.append(pattern)
        found.update((r.id, r) for r in hits)
    if missing:
        raise DocumentNotFoundError(
            f"no indexed document matches {', '.join(_quoted(m) for m in missing)} "
            "(see `kgrag docs` for ids and paths)"
        )
    return sorted(found.values(), key=lambda r: (r.enqueue_seq, r.id))


def _quoted(name: str) -> str:
    return f"'{display_name(name)}'"


def _ambiguous(given: str, hits: list[DocRecord]) -> str:
    shown = ", ".join(f"{r.id} ({document_name(r)})" for r in hits[:5])
    more = f" and {len(hits) - 5} more" if len(hits) > 5 else ""
    return (
        f"{_quoted(given)} names {len(hits)} documents: {shown}{more}; "
        "give the id of the one you mean"
    )


async def delete(applier: ChangeApplier, records: list[DocRecord]) -> ChangeStats:
    """Retract ``records``' documents from every store, in one transaction."""
    stats = await applier.apply(Change(remove=[r.id for r in records]))
    await applier.finish()
    return stats


async def set_disabled(storage: Storage, records: list[DocRecord], disabled: bool) -> int:
    """Disable (or enable) documents; returns how many changed."""
    changed = [r for r in records if r.disabled != disabled]
    for r in changed:
        r.disabled = disabled
    if changed:
        await storage.doc_status.upsert(changed)
    return len(changed)


class DocumentEntry(TypedDict):
    """One document as ``kgrag docs``, :meth:`kgrag.KGRag.documents` and MCP list it."""

    id: str
    name: str
    path: str  # its source, or the name it was given
    relative_path: str | None
    status: str
    disabled: bool
    chunks: int
    updated_at: float
    metadata: dict[str, object]
    warnings: list[str]  # the loader's, then the chunks'
    error: str | None


class DocumentPage(TypedDict):
    """A page of documents in queue order, and how many there are."""

    total: int
    offset: int
    documents: list[DocumentEntry]


def describe(record: DocRecord) -> DocumentEntry:
    """One document as ``kgrag docs`` shows it."""
    return {
        "id": record.id,
        "name": document_name(record),
        "path": record.source or record.file_path,
        "relative_path": record.relative_path,
        "status": record.status.value,
        "disabled": record.disabled,
        "chunks": len(record.chunk_ids),
        "updated_at": record.updated_at,
        "metadata": record.metadata,
        "warnings": [*record.load_warnings, *record.warnings],
        "error": record.error,
    }


async def list_documents(
    storage: Storage, offset: int = 0, limit: int | None = None
) -> DocumentPage:
    """A page of documents (queue order) and the total count."""
    records = await all_records(storage)
    page = records[offset : None if limit is None else offset + limit]
    return {"total": len(records), "offset": offset, "documents": [describe(r) for r in page]}
