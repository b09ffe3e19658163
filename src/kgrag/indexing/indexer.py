"""The indexing pipeline: documents in, merged knowledge graph out.

Flow for one run (see docs/architecture.md for the picture):

1. ``enqueue`` (:mod:`kgrag.indexing.enqueue`): new, updated and moved
   documents get a ``pending`` record and their text; unchanged ones are
   skipped.
2. ``process``: interrupted documents (``processing`` after a crash) go
   back to pending; pending documents are prepared concurrently (at most
   ``max_parallel_insert`` at once): chunked, and every chunk that is not
   already live in the index extracted and embedded (LLM calls share the
   instance's limit, :class:`~kgrag.llm.limiter.Limits`). Then each commits in turn through
   :class:`~kgrag.indexing.changes.ChangeApplier`, which retracts the
   document's previous version and recomputes every touched node and edge
   from its supporting chunks, in one transaction.

A failing chunk fails its document (status ``failed`` with the error),
never the batch; a chunk whose reply stayed unusable is recorded in the
document's ``warnings``, and above ``max_failed_chunk_fraction`` of them
the document fails. ``process(retry_failed=True)`` retries failed
documents and documents with chunk warnings.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from kgrag.errors import ExtractionError, LeaseLostError
from kgrag.extract.base import Extractor
from kgrag.indexing.changes import Change, ChangeApplier, NewVersion
from kgrag.indexing.enqueue import Enqueuer, EnqueueReport
from kgrag.indexing.imported import given_chunks
from kgrag.indexing.progress import NullProgress, ProgressSink
from kgrag.indexing.turnstile import Turnstile
from kgrag.indexing.vectors import GraphVectors
from kgrag.ingest.blocks import decode_blocks
from kgrag.ingest.chunking import make_chunks_for_settings
from kgrag.knowledge.policy import MergePolicy
from kgrag.llm.ledger import document_context
from kgrag.storage.layout import CHUNK_VECTORS, FACTS, FULL_DOCS
from kgrag.storage.layout.rows import FullDocRow
from kgrag.storage.layout.typed import TypedKV
from kgrag.types import Chunk, DocRecord, DocStatus, Document, Extraction

if TYPE_CHECKING:
    from kgrag.config.settings import Settings
    from kgrag.llm.embedding import EmbeddingService
    from kgrag.llm.service import ChatService
    from kgrag.llm.tokenizer import Tokenizer
    from kgrag.storage.base import Storage

T = TypeVar("T")
R = TypeVar("R")
MIN_IN_FLIGHT = 16  # chunks of one document being extracted at once, at least

__all__ = ["EnqueueReport", "Extractor", "IndexDeps", "Indexer", "ProcessReport"]


@dataclass
class IndexDeps:
    """Everything the indexer needs, built once by the façade."""

    storage: Storage
    extractor: Extractor
    extractor_kind: str  # "llm" or "nlp": recorded on every node and edge
    chat: ChatService | None
    embed: EmbeddingService
    tokenizer: Tokenizer
    settings: Settings


class TurnHooks:
    """What happens to a document's record as it is processed (one writer: plain writes).

    The work queue (:mod:`kgrag.indexing.worker`) replaces these with writes
    that hold only while the worker's lease on the document does.
    """

    def __init__(self, storage: Storage):
        self.storage = storage

    async def started(self, record: DocRecord) -> None:
        """The record now says ``processing``."""
        await self.storage.doc_status.upsert([record])

    async def guard(self, record: DocRecord) -> None:
        """Inside the commit's transaction, before anything is written: may refuse it."""

    async def failed(self, record: DocRecord, error: BaseException) -> None:
        """The document failed with ``error``."""
        record.status, record.error = DocStatus.FAILED, describe_error(error)
        record.updated_at = time.time()
        await self.storage.doc_status.upsert([record])


@dataclass
class ProcessReport:
    processed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (doc id, file, error)
    lost: list[str] = field(default_factory=list)  # leases another worker took over
    seconds: float = 0.0


class Indexer:
    def __init__(self, deps: IndexDeps):
        self.deps = deps
        self.storage = deps.storage
        self._enqueuer = Enqueuer(deps.storage)
        self.applier = ChangeApplier(
            deps.storage,
            policy=MergePolicy.from_settings(deps.settings, tokenizer=deps.tokenizer),
            chat=deps.chat,
            language=deps.settings.extraction.language,
            extractor_kind=deps.extractor_kind,
            extract=self._extract_chunk,
            embed=self._embed,  # blocks: skips code-only chunks
            vectors=GraphVectors(deps.storage, self._embed),
        )

    async def _embed(self, texts: list[str]) -> np.ndarray:
        return await self.deps.embed.embed(texts, kind="document")

    async def enqueue(self, docs: list[Document]) -> EnqueueReport:
        """Queue the new, updated and moved documents of ``docs``."""
        return await self._enqueuer.enqueue(docs)

    # -- process -----------------------------------------------------------
    async def process(
        self, *, retry_failed: bool = False, progress: ProgressSink | None = None
    ) -> ProcessReport:
        progress = progress or NullProgress()
        started = time.perf_counter()
        todo = await self._todo(retry_failed)
        report = ProcessReport()
        progress.start(len(todo))
        try:
            await self._run(todo, report, progress, TurnHooks(self.storage))
            await self.applier.finish()  # deferred summaries, also those a crash left
        finally:
            progress.stop()  # after the summaries: the bar's last count has their calls
        report.seconds = time.perf_counter() - started
        return report

    async def _todo(self, retry_failed: bool) -> list[DocRecord]:
        ds = self.storage.doc_status
        todo = await ds.by_status(DocStatus.PENDING, DocStatus.PROCESSING)
        if retry_failed:
            todo += await ds.by_status(DocStatus.FAILED)
            todo += [r for r in await ds.by_status(DocStatus.PROCESSED) if r.warnings]
        return sorted(todo, key=lambda r: (r.enqueue_seq, r.id))

    async def process_records(
        self, records: list[DocRecord], hooks: TurnHooks, progress: ProgressSink | None = None
    ) -> ProcessReport:
        """Process ``records`` (claimed by the caller) with ``hooks``; no deferred summaries."""
        started = time.perf_counter()
        report = ProcessReport()
        await self._run(records, report, progress or NullProgress(), hooks)
        report.seconds = time.perf_counter() - started
        return report

    async def _run(
        self,
        todo: list[DocRecord],
        report: ProcessReport,
        progress: ProgressSink,
        hooks: TurnHooks,
    ) -> None:
        # Two limits: documents being extracted, and documents in flight
        # (extracted, waiting for their turn to commit). A finished extraction
        # frees its slot at once, so a slow commit never leaves the LLM idle;
        # the larger in-flight limit bounds memory. Commits take turns (the
        # graph does not depend on their order, but each reads what the
        # previous one wrote).
        gate = Turnstile(len(todo))
        width = self.deps.settings.indexing.max_parallel_insert
        extracting, in_flight = asyncio.Semaphore(width), asyncio.Semaphore(4 * width)
        tasks = []
        for index, record in enumerate(todo):
            await in_flight.acquire()  # acquired in order: no turn can starve
            turn = _Turn(record, index, gate, extracting, hooks)
            task = asyncio.create_task(
                self._one(turn, report, progress),
                context=document_context(record.id),  # its model calls count for the document
            )
            task.add_done_callback(lambda _t: in_flight.release())
            tasks.append(task)
        await asyncio.gather(*tasks)

    async def _one(self, turn: _Turn, report: ProcessReport, progress: ProgressSink) -> None:
        record, version, error = turn.record, None, None
        try:
            async with turn.extracting:
                version = await self._prepare(record, progress, turn.hooks)
        except Exception as exc:
            error = exc
        async with turn.gate.turn(turn.index):
            if error is None and version is not None:
                retract, record.replaces = [record.id, *record.replaces], []
                change = Change(add=[version], remove=retract)
                change.guard = lambda: turn.hooks.guard(record)
                try:
                    await self.applier.apply(change)
                except Exception as exc:
                    error = exc
            if isinstance(error, LeaseLostError):
                report.lost.append(record.id)  # another worker has it now
            elif error is not None:
                await turn.hooks.failed(record, error)
                report.failed.append((record.id, record.file_path, describe_error(error)))
            else:
                report.processed.append(record.id)
        progress.document_done(error is None)

    async def _prepare(
        self, record: DocRecord, progress: ProgressSink, hooks: TurnHooks
    ) -> NewVersion:
        """Chunk the document; extract and embed the chunks the index does not hold yet."""
        stored = await TypedKV(self.storage.kv(FULL_DOCS), FullDocRow).get(record.id)
        if stored is None:
            raise RuntimeError(f"document text missing from the store ({record.id})")
        given = given_chunks(record.id, stored)  # an imported document keeps its chunks
        # CPU-bound on a large document (seconds): never on the event loop
        chunks = (
            given if given is not None else await asyncio.to_thread(self._chunk, record, stored)
        )
        record.status, record.updated_at = DocStatus.PROCESSING, time.time()
        record.chunk_ids, record.error = [c.id for c in chunks], None
        await hooks.started(record)
        todo, embed = await self._not_stored(chunks, keep=given is not None)
        progress.chunks_found(len(todo))  # chunks the index already holds need no work
        bound = max(MIN_IN_FLIGHT, 4 * self.deps.settings.llm.max_async)
        extractions, vectors = await asyncio.gather(
            _map_bounded(lambda c: self._extract(c, progress), todo, bound),
            self._embed([c.content for c in embed]) if embed else _no_vectors(),
        )
        version = NewVersion(
            record,
            record.source or record.id,
            chunks,
            dict(zip([c.id for c in todo], extractions, strict=False)),
            dict(zip([c.id for c in embed], vectors, strict=False)),
        )
        self._judge(record, chunks, version.extractions)
        return version

    def _chunk(self, record: DocRecord, stored: FullDocRow) -> list[Chunk]:
        """The document's chunks, each id once (its first place)."""
        doc = Document(
            id=record.id,
            content=stored["content"],
            file_path=stored["file_path"],
            blocks=decode_blocks(stored.get("blocks"), stored["content"]),
        )  # blocks
        made = make_chunks_for_settings(doc, self.deps.settings, self.deps.tokenizer)
        return list({c.id: c for c in reversed(made)}.values())[::-1]

    async def _not_stored(
        self, chunks: list[Chunk], keep: bool = False
    ) -> tuple[list[Chunk], list[Chunk]]:
        """Chunks needing extraction (not live, or stored with an error) and embedding.

        ``keep``: the chunks were imported with their facts; stored facts stay whatever made them.
        """
        ids = [c.id for c in chunks]
        facts = await self.storage.kv(FACTS).get_many(ids)
        kind = self.deps.extractor_kind
        todo = [
            c
            for c, f in zip(chunks, facts, strict=False)
            if f is None or (not keep and (f.get("error") or f.get("extractor", kind) != kind))
        ]
        have = await self.storage.vectors(CHUNK_VECTORS).get_metas(ids)
        return todo, [c for c in chunks if c.id not in have]

    async def _extract(self, chunk: Chunk, progress: ProgressSink) -> Extraction:
        result = await self._extract_chunk(chunk)
        progress.chunk_extracted(len(result.entities), len(result.relations))
        return result

    async def _extract_chunk(self, chunk: Chunk) -> Extraction:
        """The extractor's answer; a chunk that is code only (block chunker) is searchable, never extracted."""
        if chunk.location.get("kind") == "code":  # --- blocks: skip code ---
            return Extraction()
        return await self.deps.extractor.extract(chunk)

    def _judge(
        self, record: DocRecord, chunks: list[Chunk], extractions: dict[str, Extraction]
    ) -> None:
        """Record chunk problems on the document; fail it above the allowed fraction."""
        failed = [(cid, ex.error) for cid, ex in extractions.items() if ex.error]
        record.warnings = [f"{cid}: {reason}" for cid, reason in failed]
        record.warnings += [
            f"{cid}: {w}"
            for cid, ex in extractions.items()
            if not ex.error
            for w in ex.warnings
            if "recovered" in w or "malformed" in w
        ]
        limit = self.deps.settings.extraction.max_failed_chunk_fraction
        if chunks and failed and len(failed) / len(chunks) > limit:
            raise ExtractionError(
                f"{len(failed)} of {len(chunks)} chunks yielded nothing usable "
                f"(more than {limit:.0%}); first: {failed[0][0]}: {failed[0][1]}"
            )
        record.status, record.error, record.updated_at = DocStatus.PROCESSED, None, time.time()


@dataclass(slots=True)
class _Turn:
    """One document's place in a run."""

    record: DocRecord
    index: int
    gate: Turnstile
    extracting: asyncio.Semaphore
    hooks: TurnHooks


async def _no_vectors() -> np.ndarray:
    return np.zeros((0, 0), dtype=np.float32)


async def _map_bounded(fn: Callable[[T], Awaitable[R]], items: list[T], limit: int) -> list[R]:
    """``[await fn(x) for x in items]`` with at most ``limit`` at once, in order.

    A bounded queue: a document of 10,000 chunks hands its extractor (and
    the NLP extractor its worker threads) ``limit`` at a time, never all.
    """
    results: list[R | None] = [None] * len(items)
    pending = iter(enumerate(items))

    async def worker() -> None:
        for index, item in pending:
            results[index] = await fn(item)

    await _gather_all([worker() for _ in range(min(limit, len(items)))])
    return results  # type: ignore[return-value]  # every slot is filled


async def _gather_all(coros: list[Coroutine[object, object, T]]) -> list[T]:
    """Like gather, but cancels the siblings as soon as one fails."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def describe_error(error: BaseException) -> str:
    """``Type: message``, as a failed document's record says it."""
    return f"{type(error).__name__}: {error}"
