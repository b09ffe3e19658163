"""The indexing pipeline: documents in, merged knowledge graph out.

Flow for one run (see docs/architecture.md for the picture):

1. ``enqueue``: new documents get a ``pending`` status record, an
   ``enqueue_seq`` and their full text, in one transaction. Content already
   known (same content hash) is skipped and reported as a duplicate.
2. ``process``: interrupted documents (``processing`` after a crash) go
   back to pending; pending documents start in ``enqueue_seq`` order, at
   most ``max_parallel_insert`` at once. Each is chunked, each chunk
   extracted (LLM calls share one process-wide limit), then the document
   waits for its turn and merges into the graph; the whole merge
   (chunks, vectors, graph, status) commits in one transaction.

A failing chunk fails its document (status ``failed`` with the error),
never the batch. ``process(retry_failed=True)`` retries failed ones.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from kgrag.pipeline.merging import DocumentMerger
from kgrag.pipeline.progress import NullProgress, ProgressSink
from kgrag.pipeline.turnstile import Turnstile
from kgrag.types import Chunk, DocRecord, DocStatus, Document, Extraction


class Extractor(Protocol):
    async def extract(self, chunk: Chunk) -> Extraction: ...


@dataclass
class IndexDeps:
    """Everything the indexer needs, built once by the façade."""

    storage: Any
    extractor: Extractor
    extractor_kind: str  # "llm" or "nlp": recorded on every node and edge
    chat: Any | None
    embed: Any
    tokenizer: Any
    settings: Any


@dataclass
class EnqueueReport:
    new: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)  # human-readable messages


@dataclass
class ProcessReport:
    processed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (doc id, file, error)
    seconds: float = 0.0


def _summary(text: str) -> str:
    flat = " ".join(text.split())
    return flat[:252] + "..." if len(flat) > 255 else flat


class Indexer:
    def __init__(self, deps: IndexDeps):
        self.deps = deps
        self.storage = deps.storage
        self._merger = DocumentMerger(deps)

    # -- enqueue -----------------------------------------------------------
    async def enqueue(self, docs: list[Document]) -> EnqueueReport:
        report, fresh, seen = EnqueueReport(), [], {}
        known = await self.storage.doc_status.get_many([d.id for d in docs])
        for doc in docs:
            first = known[doc.id].file_path if doc.id in known else seen.get(doc.id)
            if first is not None:
                report.duplicates.append(
                    f"{doc.file_path}: same content as {first} ({doc.id}); skipped")
                continue
            seen[doc.id] = doc.file_path
            fresh.append(doc)
        if not fresh:
            return report
        seq, now = await self.storage.doc_status.next_seq(), time.time()
        records = [
            DocRecord(id=d.id, status=DocStatus.PENDING, file_path=d.file_path,
                      content_length=len(d.content), content_summary=_summary(d.content),
                      enqueue_seq=seq + i, created_at=now, updated_at=now)
            for i, d in enumerate(fresh)
        ]
        async with self.storage.transaction():
            await self.storage.kv("full_docs").upsert(
                {d.id: {"content": d.content, "file_path": d.file_path} for d in fresh})
            await self.storage.doc_status.upsert(records)
        report.new = [d.id for d in fresh]
        return report

    # -- process -----------------------------------------------------------
    async def process(self, *, retry_failed: bool = False,
                      progress: ProgressSink | None = None) -> ProcessReport:
        progress = progress or NullProgress()
        started = time.perf_counter()
        statuses = [DocStatus.PENDING, DocStatus.PROCESSING]
        if retry_failed:
            statuses.append(DocStatus.FAILED)
        todo = await self.storage.doc_status.by_status(*statuses)
        report = ProcessReport()
        progress.start(len(todo))
        try:
            await self._run(todo, report, progress)
        finally:
            progress.stop()
        report.seconds = time.perf_counter() - started
        return report

    async def _run(self, todo: list[DocRecord], report: ProcessReport,
                   progress: ProgressSink) -> None:
        # Two limits: documents being extracted, and documents in flight
        # (extracted, waiting for their turn to merge). A finished extraction
        # frees its slot at once, so a slow merge never leaves the LLM idle;
        # the larger in-flight limit bounds memory.
        gate = Turnstile(len(todo))
        width = self.deps.settings.max_parallel_insert
        extracting, in_flight = asyncio.Semaphore(width), asyncio.Semaphore(4 * width)
        tasks = []
        for index, record in enumerate(todo):
            await in_flight.acquire()  # acquired in order: no turn can starve
            task = asyncio.create_task(
                self._one(record, index, gate, extracting, report, progress))
            task.add_done_callback(lambda _t: in_flight.release())
            tasks.append(task)
        await asyncio.gather(*tasks)

    async def _one(self, record: DocRecord, index: int, gate: Turnstile,
                   extracting: asyncio.Semaphore, report: ProcessReport,
                   progress: ProgressSink) -> None:
        prepared, error = None, None
        try:
            async with extracting:
                prepared = await self._prepare(record, progress)
        except Exception as exc:  # noqa: BLE001 - one document never fails the batch
            error = exc
        async with gate.turn(index):
            if error is None:
                try:
                    await self._merger.commit(record, prepared)
                except Exception as exc:  # noqa: BLE001
                    error = exc
            if error is not None:
                await self._fail(record, error)
                report.failed.append((record.id, record.file_path, _describe(error)))
            else:
                report.processed.append(record.id)
        progress.document_done(error is None)

    async def _prepare(self, record: DocRecord, progress: ProgressSink):
        stored = await self.storage.kv("full_docs").get(record.id)
        if stored is None:
            raise RuntimeError(f"document text missing from the store ({record.id})")
        doc = Document(id=record.id, content=stored["content"], file_path=stored["file_path"])
        chunks = self._merger.chunk(doc)
        progress.chunks_found(len(chunks))
        record.status, record.updated_at = DocStatus.PROCESSING, time.time()
        record.chunk_ids, record.error = [c.id for c in chunks], None
        await self.storage.doc_status.upsert([record])

        async def extract(chunk: Chunk) -> Extraction:
            result = await self.deps.extractor.extract(chunk)
            progress.chunk_extracted(len(result.entities), len(result.relations))
            return result

        extractions, chunk_vectors = await asyncio.gather(
            _gather_all([extract(c) for c in chunks]),
            self.deps.embed.embed([c.content for c in chunks], kind="document"),
        )
        return chunks, extractions, chunk_vectors

    async def _fail(self, record: DocRecord, error: BaseException) -> None:
        record.status, record.error = DocStatus.FAILED, _describe(error)
        record.updated_at = time.time()
        await self.storage.doc_status.upsert([record])


async def _gather_all(coros: list) -> list:
    """Like gather, but cancels the siblings as soon as one fails."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"
