"""What one indexing call did, as the façade returns it (:class:`IndexReport`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kgrag.indexing.progress import ProgressCounts

if TYPE_CHECKING:
    from kgrag.indexing.enqueue import EnqueueReport
    from kgrag.indexing.indexer import ProcessReport
    from kgrag.storage.base import Storage


@dataclass
class IndexReport:
    """What one ``index`` / ``insert`` call did (lists of document ids)."""

    documents: int = 0  # documents queued: new, updated, replaced, moved, requeued
    new: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)  # superseding the documents named
    moved: list[str] = field(default_factory=list)
    requeued: list[str] = field(default_factory=list)  # failed before, indexed again
    unchanged: list[str] = field(default_factory=list)
    metadata_updated: list[str] = field(default_factory=list)  # same content, metadata stored
    duplicates: list[str] = field(default_factory=list)
    load_errors: list[str] = field(default_factory=list)
    processed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str, str]] = field(default_factory=list)
    warnings: dict[str, list[str]] = field(default_factory=dict)  # doc id -> chunk problems
    insert_s: float = 0.0
    # the run's work as the progress bar counted it: chunks extracted, records found
    progress: ProgressCounts = field(default_factory=ProgressCounts)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.load_errors


def run_report(
    done: ProcessReport,
    started: float,
    counts: ProgressCounts,
    queued: EnqueueReport | None = None,
) -> IndexReport:
    """The report of a run that began at ``started`` (``time.perf_counter``) and ends now.

    ``queued``: what the run's enqueue found, for runs that enqueued
    documents (a retry or a rebuild processes what is already queued).
    """
    report = IndexReport(
        processed=done.processed,
        failed=done.failed,
        insert_s=time.perf_counter() - started,
        progress=counts,
    )
    if queued is not None:
        report.documents = len(queued.queued)
        report.new, report.updated, report.moved = queued.new, queued.updated, queued.moved
        report.replaced, report.requeued = queued.replaced, queued.requeued
        report.unchanged, report.duplicates = queued.unchanged, queued.duplicates
        report.metadata_updated = queued.metadata_updated
    return report


async def chunk_warnings(storage: Storage, ids: list[str]) -> dict[str, list[str]]:
    """The load and chunk warnings of the documents ``ids``, for those that have any."""
    records = await storage.doc_status.get_many(ids)
    return {
        i: [*r.load_warnings, *r.warnings]
        for i, r in records.items()
        if r.warnings or r.load_warnings
    }
