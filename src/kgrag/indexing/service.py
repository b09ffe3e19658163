"""The one write path: every write to an index goes through :class:`IndexingService`.

The Python API (:class:`~kgrag.api.facade.KGRag`), and through it the CLI
and MCP's ``insert_text``, the server's document jobs
(:mod:`kgrag.server.documents.jobs`), the workers, an import and every curation
edit call it: none of them takes the writer lease or commits on its own.
An index run (:meth:`IndexingService.index`) is:

1. **load**: files and folders, in a worker thread, under the settings'
   limits (:func:`kgrag.ingest.loaders.load_paths`); ``shape`` lets the
   caller name what was loaded (the server: paths inside its input folder);
2. under the **writer lease**: the refused inputs recorded
   (:mod:`kgrag.indexing.rejected`, one record for ``kgrag status`` and the
   server), the settings settled, the documents **enqueued**
   (:mod:`kgrag.indexing.enqueue`) and **processed**: extracted, and each
   committed by :class:`~kgrag.indexing.changes.ChangeApplier`, which
   computes the change and commits it in one transaction;
3. after the lease: the after-index hook (``resolve=auto``), the cost
   ledger saved, the :class:`~kgrag.indexing.report.IndexReport`.

Writes that are not index runs (delete, disable, import, rebuild, repair,
curation edits, the server's own records) go through :meth:`~IndexingService.write`:
the same lease, the same :class:`ChangeApplier`. The layers above hand the
service what it cannot import (:class:`WriteParts`). Every call is told to
the watchers as a :class:`WriteRun` (:func:`watch`): what the tests read to
see that each entry point took this path.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from kgrag.errors import ConfigError
from kgrag.indexing import documents, rejected
from kgrag.indexing.costs import indexing
from kgrag.indexing.progress import CountingProgress, ProgressSink
from kgrag.indexing.report import IndexReport, chunk_warnings, run_report
from kgrag.ingest.loaders import LoadReport, load_paths
from kgrag.ingest.options import LoadOptions
from kgrag.llm.cache import LLMCache
from kgrag.storage.layout import LLM_CACHE

if TYPE_CHECKING:
    from kgrag.config.settings import Settings
    from kgrag.indexing.changes import ChangeStats
    from kgrag.indexing.enqueue import EnqueueReport
    from kgrag.indexing.indexer import Indexer
    from kgrag.indexing.rejected import Refusal
    from kgrag.indexing.worker import WorkerOptions, WorkerReport
    from kgrag.types import Document

T = TypeVar("T")
Lease = Callable[[bool], AbstractAsyncContextManager[None]]


@dataclass(frozen=True, slots=True)
class WriteParts:
    """What the service needs of an open index, handed down by the layer that opened it.

    Read on every call: settling the settings may rebuild the indexer.
    """

    indexer: Callable[[], Indexer]
    settings: Callable[[], Settings]
    lease: Lease  # the writer lease; ``True``: shared with workers (postgres)
    settle: Callable[[list[Document]], Awaitable[None]]  # record (first run) and check settings
    after_index: Callable[[], Awaitable[None]]  # after an index run's lease (resolve=auto)
    save_costs: Callable[[], Awaitable[None]]  # the cost ledger, added to the stored totals


@dataclass(slots=True)
class IndexRequest:
    """One index run: files and folders (``paths``) or documents already made."""

    paths: Sequence[str | Path] = ()
    documents: list[Document] | None = None
    metadata: dict[str, Any] | None = None  # stored with every loaded document
    replace: str | None = None  # a document (id or name) the one loaded file supersedes
    strict: bool = False  # a refused file: index nothing, report the refusals
    progress: ProgressSink | None = None
    # Run in the loading thread: rename what was loaded; the refusals to record (None: by path).
    shape: Callable[[LoadReport], list[Refusal] | None] | None = None
    refused: list[Refusal] = field(default_factory=list)  # refused before loading (uploads)
    resume: bool = True  # nothing to index: still process what the queue holds


@dataclass(frozen=True, slots=True)
class WriteRun:
    """One call of the service, as the watchers see it."""

    kind: str  # index, enqueue, retry, delete, disable, work, or the write's own name
    documents: tuple[str, ...] = ()  # the documents it indexed, queued or changed
    refused: tuple[str, ...] = ()  # the ids of the refusals it recorded


_watchers: list[list[WriteRun]] = []


@contextmanager
def watch() -> Iterator[list[WriteRun]]:
    """Collect every :class:`WriteRun` of this process while the block runs."""
    runs: list[WriteRun] = []
    _watchers.append(runs)
    try:
        yield runs
    finally:
        _watchers.remove(runs)


def _tell(run: WriteRun) -> None:
    for runs in list(_watchers):
        runs.append(run)


class IndexingService:
    """The one write path of an index (see the module docstring)."""

    def __init__(self, parts: WriteParts):
        self.parts = parts

    @property
    def indexer(self) -> Indexer:
        return self.parts.indexer()

    async def load(self, request: IndexRequest) -> tuple[LoadReport, list[Refusal]]:
        """What ``request`` names, loaded (in a thread), and the refusals to record."""
        if request.documents is not None:
            return LoadReport(documents=list(request.documents)), []
        options = LoadOptions.from_settings(self.parts.settings())
        return await asyncio.to_thread(self._load, request, options)

    def _load(
        self, request: IndexRequest, options: LoadOptions
    ) -> tuple[LoadReport, list[Refusal]]:
        loaded = load_paths([str(p) for p in request.paths], options)
        for doc in loaded.documents:
            doc.metadata = dict(request.metadata or {})
        shaped = request.shape(loaded) if request.shape is not None else None
        return loaded, shaped if shaped is not None else rejected.refusals_of(loaded)

    async def index(self, request: IndexRequest) -> IndexReport:
        """Load, lease, enqueue, process and commit, report (see the module docstring)."""
        loaded, refusals = await self.load(request)
        errors = [str(e) for e in loaded.errors]
        if request.strict and errors:
            return IndexReport(load_errors=errors)
        if request.replace is not None:
            await self._mark_replacement(loaded.documents, request.replace)
        refusals = [*request.refused, *refusals]
        from_files = request.documents is None
        report = await self._index(loaded.documents, request, refusals if from_files else None)
        report.load_errors = errors
        ids = tuple(d.id for d in loaded.documents)
        _tell(WriteRun("index", ids, tuple(r.doc_id for r in refusals)))
        return report

    async def _index(
        self, docs: list[Document], request: IndexRequest, refusals: list[Refusal] | None
    ) -> IndexReport:
        started = time.perf_counter()
        if not docs and not request.resume and refusals is None:
            return IndexReport()
        async with self.parts.lease(False):
            if refusals is not None:
                await rejected.record(self.indexer.storage, refusals, docs)
            if not docs and not request.resume:  # nothing to index, nothing to resume
                return IndexReport()
            await self.parts.settle(docs)
            queued = await self.indexer.enqueue(docs)
            counting = CountingProgress(request.progress)
            with indexing(queued, docs):
                done = await self.indexer.process(progress=counting)
        await self.parts.after_index()
        await self.parts.save_costs()
        report = run_report(done, started, counting.counts, queued)
        report.warnings = await chunk_warnings(self.indexer.storage, done.processed)
        return report

    async def _mark_replacement(self, docs: list[Document], replace: str) -> None:
        if len(docs) != 1:
            raise ConfigError(f"--replace needs exactly one new file, got {len(docs)}")
        found = await documents.find_documents(self.indexer.storage, [replace])
        docs[0].replaces = [r.id for r in found]

    async def enqueue(self, request: IndexRequest) -> tuple[EnqueueReport, list[str]]:
        """Load and queue documents for the workers without processing them."""
        loaded, _ = await self.load(request)
        async with self.parts.lease(True):
            async with self.indexer.storage.serial():  # two first runs record one set of settings
                await self.parts.settle(loaded.documents)
            queued = await self.indexer.enqueue(loaded.documents)
        _tell(WriteRun("enqueue", tuple(queued.queued)))
        return queued, [str(e) for e in loaded.errors]

    async def retry(self, progress: ProgressSink | None = None) -> IndexReport:
        """Retry failed documents and those with chunk warnings; resume interrupted ones."""
        started = time.perf_counter()
        counting = CountingProgress(progress)
        async with self.parts.lease(False):
            done = await self.indexer.process(retry_failed=True, progress=counting)
        await self.parts.save_costs()
        report = run_report(done, started, counting.counts)
        report.warnings = await chunk_warnings(self.indexer.storage, done.processed)
        _tell(WriteRun("retry", tuple(done.processed)))
        return report

    async def delete(
        self, ids: Sequence[str], paths: Sequence[str] = (), *, purge_cache: bool = False
    ) -> tuple[list[str], ChangeStats]:
        """Remove documents from every store; ``purge_cache``: their chunks' cached answers too."""
        storage = self.indexer.storage
        async with self.parts.lease(False):
            records = await documents.find_documents(storage, ids, paths)
            stats = await documents.delete(self.indexer.applier, records)
            if purge_cache:
                await LLMCache(storage.kv(LLM_CACHE)).purge_tags(stats.dead_chunks)
        await self.parts.save_costs()
        _tell(WriteRun("delete", tuple(r.id for r in records)))
        return [r.id for r in records], stats

    async def set_disabled(
        self, ids: Sequence[str], disabled: bool, paths: Sequence[str] = ()
    ) -> list[str]:
        """Disable (or enable) documents: indexed, but not retrieved while disabled."""
        async with self.parts.lease(False):
            records = await documents.find_documents(self.indexer.storage, ids, paths)
            await documents.set_disabled(self.indexer.storage, records, disabled)
        _tell(WriteRun("disable", tuple(r.id for r in records)))
        return [r.id for r in records]

    async def write(
        self,
        kind: str,
        act: Callable[[Indexer], Awaitable[T]],
        *,
        settle: list[Document] | None = None,
        save_costs: bool = False,
    ) -> T:
        """A write that is not an index run, under the writer lease, through the indexer.

        ``act`` gets the indexer (its :class:`ChangeApplier` computes and
        commits changes); ``settle``: documents to settle the settings for first.
        """
        async with self.parts.lease(False):
            if settle is not None:
                await self.parts.settle(settle)
            result = await act(self.indexer)
        if save_costs:
            await self.parts.save_costs()
        _tell(WriteRun(kind))
        return result

    async def work(self, options: WorkerOptions | None = None) -> WorkerReport:
        """Index queued documents as one of any number of workers (storage = postgres)."""
        from kgrag.indexing.worker import Worker, WorkerOptions

        try:
            report = await Worker(self.indexer, options or WorkerOptions()).run()
        finally:
            await self.parts.save_costs()
        _tell(WriteRun("work", tuple(report.processed)))
        return report
