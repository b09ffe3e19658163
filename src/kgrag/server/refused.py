"""Files the server refused, kept so the documents listing shows them as failed.

A file refused at upload (its type, size, an archive over budget) or by
the loader later (a corrupt PDF, no text) never becomes a document of the
index, yet its user should see it beside the others, with the reason. Each
refusal is a record in the workspace's ``server_refused`` key-value
namespace, keyed by a document id: the id the file would have had when it
was stored (a later successful load of the same file forgets it), or a
fresh one for a file that was never kept. :func:`as_records` turns them
into ``failed`` :class:`~kgrag.types.DocRecord`\\ s for the listing and the
counts; deleting the id forgets it. The pipeline never sees them, so
``retry`` and the graph are unaffected.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from kgrag.ingest.names import display_name
from kgrag.types import DocRecord, DocStatus

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

NAMESPACE = "server_refused"


@dataclass(frozen=True, slots=True)
class Refusal:
    """One refused file: its id, the name it is shown by, and why."""

    doc_id: str
    file_path: str
    reason: str
    track_id: str | None = None
    created_at: float = field(default_factory=time.time)

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


def fresh_id() -> str:
    """An id for a file that was never kept (its name says nothing unique)."""
    return f"refused-{secrets.token_hex(8)}"


async def note(storage: Storage, refusals: Iterable[Refusal]) -> None:
    """Remember ``refusals`` (a newer one of an id replaces the older)."""
    rows = {r.doc_id: asdict(r) for r in refusals}
    if rows:
        await storage.kv(NAMESPACE).upsert(rows)


async def forget(storage: Storage, ids: Iterable[str]) -> list[str]:
    """Forget the refusals of ``ids``; the ids that were known."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return []
    kv = storage.kv(NAMESPACE)
    known = [i for i, row in zip(wanted, await kv.get_many(wanted), strict=True) if row]
    if known:
        await kv.delete(known)
    return known


async def all_refusals(storage: Storage) -> list[Refusal]:
    """Every remembered refusal, oldest first."""
    kv = storage.kv(NAMESPACE)
    rows = await kv.get_many(await kv.keys())
    refusals = [_from_row(row) for row in rows if isinstance(row, dict)]
    return sorted(refusals, key=lambda r: (r.created_at, r.doc_id))


async def as_records(storage: Storage, known: Iterable[str] = ()) -> list[DocRecord]:
    """The refusals as ``failed`` records, less those whose id is a document's now."""
    skip = set(known)
    return [r.to_record() for r in await all_refusals(storage) if r.doc_id not in skip]


def _from_row(row: dict[str, Any]) -> Refusal:
    return Refusal(
        str(row["doc_id"]),
        str(row.get("file_path", "")),
        str(row.get("reason", "")),
        row.get("track_id"),
        float(row.get("created_at", 0.0)),
    )
