"""The inputs an index refused, with their reasons: one record, read by status and the server.

A file the loader refuses (a corrupt PDF, no text, over a limit) or the
server refuses at upload (its type, its size) never becomes a document,
yet its user should see it: ``kgrag status`` lists the refused files by
path (``rejected_inputs``), and the server's documents listing shows each
refusal as a ``failed`` document. Both read the same rows: the key-value
namespace :data:`~kgrag.storage.layout.SERVER_REFUSED` (its name kept for
the indexes that hold it), one :class:`Refusal` per document id: the id
the file would have had as a document, or a fresh one for a file never
kept. A refusal with a ``path`` is a file on disk: status shows it, and
it goes once the file is gone or loads.

Indexes written before this record kept the status view in the meta
value ``rejected_inputs`` (``{path: reason}``); it is read as refusals,
and folded into the rows by the next write (:func:`record`, :func:`note`,
:func:`forget`, each under the writer lease).
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kgrag.ingest.ids import source_doc_id
from kgrag.ingest.names import display_name
from kgrag.storage.layout import REJECTED_META, SERVER_REFUSED
from kgrag.storage.layout.rows import RefusalRow
from kgrag.storage.layout.typed import TypedKV, read_meta
from kgrag.types import DocRecord, DocStatus

if TYPE_CHECKING:
    from kgrag.errors import LoaderError
    from kgrag.ingest.loaders import LoadReport
    from kgrag.storage.base import Storage
    from kgrag.types import Document

KEY = REJECTED_META  # the record of indexes written before the one record (read, then folded)


@dataclass(frozen=True, slots=True)
class Refusal:
    """One refused input: its id, the name it is shown by, why, and its file (if on disk)."""

    doc_id: str
    file_path: str
    reason: str
    track_id: str | None = None
    created_at: float = field(default_factory=time.time)
    path: str | None = None  # the file's absolute path (escaped); None: never kept

    def to_record(self) -> DocRecord:
        return DocRecord(
            id=self.doc_id,
            status=DocStatus.FAILED,
            file_path=display_name(self.file_path),
            content_length=0,
            content_summary="",
            error=self.reason,
            created_at=self.created_at,
            updated_at=self.created_at,
        )

    def to_row(self) -> RefusalRow:
        row: RefusalRow = {
            "doc_id": self.doc_id,
            "file_path": self.file_path,
            "reason": self.reason,
            "track_id": self.track_id,
            "created_at": self.created_at,
        }
        if self.path is not None:  # absent: an upload refusal's row stays as it always was
            row["path"] = self.path
        return row


def fresh_id() -> str:
    """An id for a file that was never kept (its name says nothing unique)."""
    return f"refused-{secrets.token_hex(8)}"


def refusals_of(
    loaded: LoadReport,
    name: Callable[[LoaderError], str] | None = None,
    track_id: str | None = None,
) -> list[Refusal]:
    """The refusals of the files ``loaded`` refused; ``name``: how each is shown (its path)."""
    out = []
    for error in loaded.errors:
        path = display_name(os.path.abspath(error.path))
        shown = name(error) if name is not None else path
        doc_id = source_doc_id(str(Path(error.path).resolve()))
        out.append(Refusal(doc_id, shown, display_name(error.reason), track_id, path=path))
    return out


async def record(storage: Storage, refused: list[Refusal], loaded: Iterable[Document]) -> None:
    """After a load: forget the loaded files and the gone ones, remember ``refused``.

    Written on change only (a load that changes nothing writes nothing).
    """
    before = {r.doc_id: r for r in await all_refusals(storage)}
    kept = still_refused(before, list(loaded))
    kept.update((r.doc_id, r) for r in refused)
    await _write(storage, before, kept)


def still_refused(before: dict[str, Refusal], loaded: list[Document]) -> dict[str, Refusal]:
    """The refusals a load leaves: less the files it loaded and the files gone from disk."""
    ids = {d.id for d in loaded}
    sources = {d.source or d.file_path for d in loaded}
    return {
        i: r
        for i, r in before.items()
        if i not in ids and (r.path is None or (r.path not in sources and os.path.exists(r.path)))
    }


async def note(storage: Storage, refusals: Iterable[Refusal]) -> None:
    """Remember ``refusals`` (a newer one of an id replaces the older)."""
    before = {r.doc_id: r for r in await all_refusals(storage)}
    await _write(storage, before, {**before, **{r.doc_id: r for r in refusals}})


async def forget(storage: Storage, ids: Iterable[str]) -> list[str]:
    """Forget the refusals of ``ids``; the ids that were known."""
    wanted = list(dict.fromkeys(ids))
    before = {r.doc_id: r for r in await all_refusals(storage)}
    known = [i for i in wanted if i in before]
    await _write(storage, before, {i: r for i, r in before.items() if i not in known})
    return known


async def all_refusals(storage: Storage) -> list[Refusal]:
    """Every remembered refusal (the rows, and an older index's meta record), oldest first."""
    kv = TypedKV(storage.kv(SERVER_REFUSED), RefusalRow)
    rows = await kv.get_many(await kv.keys())
    found = {r.doc_id: r for r in (_from_row(row) for row in rows if isinstance(row, dict))}
    for path, reason in (await read_meta(storage, KEY, dict[str, str]) or {}).items():
        legacy = Refusal(source_doc_id(path), path, reason, None, 0.0, path)
        found.setdefault(legacy.doc_id, legacy)
    return sorted(found.values(), key=lambda r: (r.created_at, r.doc_id))


async def as_records(storage: Storage, known: Iterable[str] = ()) -> list[DocRecord]:
    """The refusals as ``failed`` records, less those whose id is a document's now."""
    skip = set(known)
    return [r.to_record() for r in await all_refusals(storage) if r.doc_id not in skip]


async def by_path(storage: Storage) -> dict[str, str]:
    """The refused files on disk, ``{path: reason}`` sorted by path (``kgrag status``)."""
    refusals = await all_refusals(storage)
    return dict(sorted((r.path, r.reason) for r in refusals if r.path is not None))


async def _write(storage: Storage, before: dict[str, Refusal], after: dict[str, Refusal]) -> None:
    """Make the stored rows ``after`` (they were ``before``); fold an older meta record in."""
    legacy = bool(await storage.get_meta(KEY))
    gone = sorted(before.keys() - after.keys())
    changed = {i: r.to_row() for i, r in after.items() if before.get(i) != r or legacy}
    if not gone and not changed and not legacy:
        return
    kv = TypedKV(storage.kv(SERVER_REFUSED), RefusalRow)
    async with storage.transaction():
        if gone:
            await kv.delete(gone)
        if changed:
            await kv.upsert(changed)
        if legacy:
            await storage.set_meta(KEY, {})


def _from_row(row: RefusalRow) -> Refusal:
    path = row.get("path")
    return Refusal(
        str(row["doc_id"]),
        str(row.get("file_path", "")),
        str(row.get("reason", "")),
        row.get("track_id"),
        float(row.get("created_at", 0.0)),
        str(path) if path is not None else None,
    )
