"""Document records as LightRAG's ``DocStatusResponse``, and the paginated listing.

A document answers with LightRAG's fields (``id``, ``content_summary``,
``content_length``, ``status`` in lower case, ISO times, ``track_id``,
``chunks_count``, ``error_msg``, ``metadata``, ``file_path``) and kgrag's
(``name``: how kgrag names it, escaped, see :mod:`kgrag.ingest.names`;
``disabled``, ``warnings``). The listing filters by status (any of
several) and a search term (in the id, path, original name or summary,
case-insensitive), sorts, and cuts one page. ``error_msg`` names no model
endpoint's address or server path (:func:`kgrag.server.access.redact.client_text`).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import TypedDict

from kgrag.ingest.names import display_name, document_name
from kgrag.server.access.redact import client_text
from kgrag.server.views import JSONObject
from kgrag.types import DocRecord, DocStatus

SORT_FIELDS = ("created_at", "updated_at", "id", "file_path")


class DocView(TypedDict):
    """One document: LightRAG's ``DocStatusResponse`` fields, then kgrag's."""

    id: str
    name: str
    content_summary: str
    content_length: int
    status: str
    created_at: str
    updated_at: str
    track_id: str | None
    chunks_count: int
    error_msg: str | None
    metadata: JSONObject
    file_path: str
    disabled: bool
    warnings: list[str]


class Pagination(TypedDict):
    page: int
    page_size: int
    total_count: int
    total_pages: int
    has_next: bool
    has_prev: bool


def iso(ts: float | None) -> str:
    """A UNIX time as an ISO 8601 string in UTC ('' for none)."""
    if not ts:
        return ""
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat()


def doc_view(record: DocRecord, track_id: str | None = None) -> DocView:
    """One document as the listing, track and status routes show it."""
    return {
        "id": record.id,
        "name": document_name(record),
        "content_summary": record.content_summary,
        "content_length": record.content_length,
        "status": record.status.value,
        "created_at": iso(record.created_at),
        "updated_at": iso(record.updated_at),
        "track_id": track_id,
        "chunks_count": len(record.chunk_ids),
        "error_msg": client_text(record.error) if record.error else record.error,
        "metadata": record.metadata,
        "file_path": record.file_path,
        "disabled": record.disabled,
        "warnings": [*record.load_warnings, *record.warnings],
    }


def placeholder_view(
    doc_id: str, file_path: str, status: str, error: str | None, created_at: float
) -> DocView:
    """A document a track asked for that the index does not hold (yet, or at all)."""
    return {
        "id": doc_id,
        "name": display_name(file_path),
        "content_summary": "",
        "content_length": 0,
        "status": status,
        "created_at": iso(created_at),
        "updated_at": iso(created_at),
        "track_id": None,
        "chunks_count": 0,
        "error_msg": client_text(error) if error else error,
        "metadata": {},
        "file_path": file_path,
        "disabled": False,
        "warnings": [],
    }


def status_counts(records: list[DocRecord]) -> dict[str, int]:
    """Documents per status, every status listed, plus ``all``."""
    counts = {s.value: 0 for s in DocStatus}
    for r in records:
        counts[r.status.value] += 1
    counts["all"] = len(records)
    return counts


@dataclass(slots=True)
class PageRequest:
    """Which documents, in which order, which page."""

    statuses: list[str] = field(default_factory=list)  # none: every status
    search: str = ""
    page: int = 1
    page_size: int = 50
    sort_field: str = "updated_at"
    sort_direction: str = "desc"


def _matches(record: DocRecord, req: PageRequest) -> bool:
    if req.statuses and record.status.value not in req.statuses:
        return False
    if not req.search:
        return True
    term = req.search.casefold()
    fields = (record.id, record.file_path, record.source or "", record.content_summary)
    original = str(record.metadata.get("original_name", ""))
    return any(term in f.casefold() for f in (*fields, original))


def page_of(records: list[DocRecord], req: PageRequest) -> tuple[list[DocRecord], int]:
    """The records of the requested page and how many matched in all."""
    hits = [r for r in records if _matches(r, req)]
    hits.sort(
        key=lambda r: (getattr(r, req.sort_field), r.id), reverse=req.sort_direction == "desc"
    )
    start = (req.page - 1) * req.page_size
    return hits[start : start + req.page_size], len(hits)


def pagination(page: int, page_size: int, total: int) -> Pagination:
    pages = max(1, math.ceil(total / page_size)) if page_size else 1
    return {
        "page": page,
        "page_size": page_size,
        "total_count": total,
        "total_pages": pages,
        "has_next": page < pages,
        "has_prev": page > 1,
    }
