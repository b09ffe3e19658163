"""The ``KGRag`` façade: the one object most users touch.

    async with KGRag(Settings(workdir="./index")) as rag:
        await rag.index_paths(["docs/"])
        print(await rag.query("Who founded the company?"))
        async for piece in rag.stream("And when?"):
            print(piece, end="")

``SyncKGRag`` (:mod:`kgrag.api.blocking`) offers the same methods for code without
an event loop. Settings are read from the environment only when no
``Settings`` object is passed, at construction time. Models and the store
may be brought along (``KGRag(settings, chat=..., embed=..., rerank=...,
storage=...)``; see docs/embedding.md).

The façade is thin: opening and settling the index live in
:mod:`kgrag.api.opening`, what a run did in :mod:`kgrag.indexing.report`,
the operations on documents and the index in :mod:`kgrag.maintenance`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from kgrag.api import opening as open_index
from kgrag.config.settings import Settings
from kgrag.curation.facade import CurationMethods
from kgrag.errors import ConfigError, NotOpenError
from kgrag.indexing.indexer import Indexer, ProcessReport
from kgrag.indexing.progress import CountingProgress, ProgressSink
from kgrag.indexing.report import IndexReport, run_report
from kgrag.indexing.service import IndexingService, IndexRequest, WriteParts
from kgrag.llm.ledger import labelled
from kgrag.types import Document

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Callable
    from contextlib import AbstractAsyncContextManager

    from kgrag.curation.resolution.report import ResolutionReport
    from kgrag.extract.base import Extractor
    from kgrag.indexing.changes import ChangeStats
    from kgrag.indexing.documents import DocumentPage
    from kgrag.indexing.enqueue import EnqueueReport
    from kgrag.indexing.worker import WorkerOptions, WorkerReport
    from kgrag.llm.adapters import ChatModel, EmbeddingModel, RerankModel
    from kgrag.llm.factory import Models
    from kgrag.llm.limiter import Limits
    from kgrag.llm.tokenizer import Tokenizer
    from kgrag.maintenance.check import CheckReport
    from kgrag.maintenance.cost_report import CostReport
    from kgrag.maintenance.export_records import ExportData
    from kgrag.maintenance.importing.model import ImportReport
    from kgrag.retrieval.answer.stream import AnswerStream
    from kgrag.retrieval.engine import QueryEngine
    from kgrag.retrieval.param import QueryParam, QueryResult
    from kgrag.retrieval.shapes import QueryData
    from kgrag.storage.base import Storage

__all__ = ["IndexReport", "KGRag"]

T = TypeVar("T")
NOT_OPEN = "KGRag is not open: use `async with KGRag(...) as rag:` or `await rag.open()`"


class _Part(Generic[T]):
    """A part of the open index (:class:`~kgrag.api.opening.OpenIndex`), read through the façade.

    Read before :meth:`KGRag.open`, a clear :class:`NotOpenError`; after
    :meth:`KGRag.close`, the parts stay readable (costs, settings).
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _Part[T]: ...
    @overload
    def __get__(self, obj: KGRag, owner: type | None = None) -> T: ...
    def __get__(self, obj: KGRag | None, owner: type | None = None) -> T | _Part[T]:
        if obj is None:
            return self
        value: T = getattr(obj._open, self.name)
        return value


class KGRag(CurationMethods):
    """One index: build it from documents, ask it questions.

    ``settings`` (read from the environment when omitted) with
    ``overrides`` applied and validated. Bring your own parts (see
    docs/embedding.md): ``chat``, ``embed`` and ``rerank`` take objects
    implementing :class:`~kgrag.llm.base.ChatProvider`,
    :class:`~kgrag.llm.base.EmbeddingProvider` or
    :class:`~kgrag.llm.base.RerankProvider`, or plain (LightRAG-style)
    functions (:mod:`kgrag.llm.adapters`); they get kgrag's cache, retries,
    limits and cost ledger. ``storage`` is a :class:`~kgrag.storage.base.Storage`
    not yet opened: kgrag opens it in :meth:`open` and closes it in
    :meth:`close`, as its own. ``limits`` (:class:`~kgrag.llm.limiter.Limits`)
    shares concurrency limits between instances; without it each instance
    has its own, sized by its settings.
    """

    storage: _Part[Storage] = _Part()
    models: _Part[Models] = _Part()
    indexer: _Part[Indexer] = _Part()
    tokenizer: _Part[Tokenizer] = _Part()
    extractor: _Part[Extractor] = _Part()
    from_index: _Part[list[str]] = _Part()  # the fields the index's record filled in

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        chat: ChatModel | None = None,
        embed: EmbeddingModel | None = None,
        rerank: RerankModel | None = None,
        storage: Storage | None = None,
        limits: Limits | None = None,
        **overrides: Any,
    ):
        base = settings if settings is not None else Settings()
        self.settings = base.with_overrides(**overrides)
        self._given = open_index.Given.of(chat, embed, rerank, storage, limits)
        self._parts: open_index.OpenIndex | None = None  # set by open
        self._opened = False
        self._engine: QueryEngine | None = None
        # called with a message when another process writes
        self.on_writer_wait: Callable[[str], None] | None = None
        self.indexing = IndexingService(self._write_parts())  # every write goes through it

    def _write_parts(self) -> WriteParts:
        """What the write path needs of this index (read on every call: settling may rebuild)."""
        return WriteParts(
            indexer=lambda: self.indexer,
            settings=lambda: self.settings,
            lease=lambda shared: self.writing(shared=shared),
            settle=self._settle_settings,
            after_index=self._auto_resolve,
            save_costs=self._save_ledger,
        )

    @property
    def _open(self) -> open_index.OpenIndex:
        """The parts of the open index (store, models, extractor, indexer)."""
        if self._parts is None:
            raise NotOpenError(NOT_OPEN)
        return self._parts

    # -- lifecycle ---------------------------------------------------------
    async def __aenter__(self) -> KGRag:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def open(self, *, create: bool = True) -> None:
        """Open the workdir's index (``create=False``: refuse a workdir that holds none).

        Settings the index remembers (:mod:`kgrag.indexing.manifest`) fill in those
        not set; a set value contradicting them is a :class:`ConfigError`.
        No embedding model is built until something embeds.
        """
        self._parts = await open_index.open_index(self.settings, self._given, create=create)
        self.settings = self._parts.settings
        self._engine = None
        self._opened = True

    async def close(self) -> None:
        if not self._opened:
            return
        self._opened = False
        try:
            await self._save_ledger()
            await self.models.aclose()
        finally:
            await self.storage.close()

    async def _settle_settings(self, docs: list[Document]) -> None:
        """Before an indexing run embeds anything: record (first run) and check the settings."""
        settled = await open_index.settle(self._open, docs, self._given)
        if settled is not self._parts:
            self._parts, self.settings, self._engine = settled, settled.settings, None

    async def _save_ledger(self) -> None:
        """Add the model costs spent since the last save to the stored all-time totals."""
        await self._open.costs.save()

    # -- indexing ----------------------------------------------------------
    def writing(self, *, shared: bool = False) -> AbstractAsyncContextManager[None]:
        """The workdir's writer lease (one writer process; calls in this process take turns).

        ``shared``: alongside workers and other shared holders where the backend
        has many writers (postgres); the embedded store has one writer only.
        """
        return self.storage.writer(
            wait=self.settings.indexing.wait_for_writer, on_wait=self.on_writer_wait, shared=shared
        )

    async def insert(
        self,
        texts: str | Iterable[str],
        file_paths: Iterable[str] | None = None,
        progress: ProgressSink | None = None,
        *,
        ids: Iterable[str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> IndexReport:
        """Index raw texts, one document each.

        ``file_paths`` and ``ids`` give one entry per text (a single string
        for a single text); lists of different lengths are a
        :class:`ConfigError`, never silently cut. ``ids`` are the documents'
        identities (a later text under the same id supersedes the earlier
        one); without them a text is known by its content. ``metadata`` is
        stored with every document of the call.
        """
        from kgrag.ingest.texts import text_documents

        docs = text_documents(texts, file_paths, ids, metadata)
        return await self.index_documents(docs, progress=progress)

    async def index_paths(
        self,
        paths: Iterable[str | Path],
        progress: ProgressSink | None = None,
        *,
        metadata: dict[str, Any] | None = None,
        replace: str | None = None,
        strict: bool = False,
    ) -> IndexReport:
        """Load files and folders (recursively) and index them.

        Loading obeys the settings' limits (:class:`~kgrag.ingest.options.LoadOptions`);
        files that cannot be used are named in ``load_errors`` and the rest is
        indexed. ``strict``: if any file could not be used, index nothing and
        return a report holding only ``load_errors``.
        ``replace``: the id (or path) of a document the loaded file supersedes
        although its source differs (exactly one file must be given).
        """
        request = IndexRequest(
            list(paths), metadata=metadata, replace=replace, strict=strict, progress=progress
        )
        return await self.indexing.index(request)

    async def index_documents(
        self, docs: list[Document], progress: ProgressSink | None = None
    ) -> IndexReport:
        return await self.indexing.index(IndexRequest(documents=docs, progress=progress))

    async def enqueue_paths(
        self, paths: Iterable[str | Path], *, metadata: dict[str, Any] | None = None
    ) -> tuple[EnqueueReport, list[str]]:
        """Queue files and folders for the workers without processing them.

        Returns what was queued and the load errors (files that cannot be used).
        """
        return await self.indexing.enqueue(IndexRequest(list(paths), metadata=metadata))

    @labelled("index")
    async def work(self, options: WorkerOptions | None = None) -> WorkerReport:
        """Index queued documents as one of any number of workers (storage = postgres)."""
        return await self.indexing.work(options)

    @labelled("dedupe")
    async def _auto_resolve(self) -> None:
        """``resolve=auto``: merge the surest duplicate entities after an index run."""
        if self.settings.resolution.mode == "auto":
            from kgrag.curation.resolution.apply import auto_resolve

            await auto_resolve(self)

    @labelled("reindex")
    async def retry_failed(self, progress: ProgressSink | None = None) -> IndexReport:
        """Retry failed documents and those with chunk warnings; resume interrupted ones."""
        return await self.indexing.retry(progress)

    # -- document lifecycle ---------------------------------------------------
    @labelled("delete")
    async def delete(
        self, ids: Iterable[str] = (), *, paths: Iterable[str] = (), purge_cache: bool = False
    ) -> tuple[list[str], ChangeStats]:
        """Remove documents (by id, source or path glob) from every store.

        ``purge_cache`` also drops the cached extraction answers of the chunks
        that no remaining document contains.
        """
        return await self.indexing.delete(list(ids), list(paths), purge_cache=purge_cache)

    async def set_disabled(
        self, ids: Iterable[str] = (), disabled: bool = True, *, paths: Iterable[str] = ()
    ) -> list[str]:
        """Disable (or enable) documents: indexed, but not retrieved while disabled."""
        return await self.indexing.set_disabled(list(ids), disabled, list(paths))

    async def documents(self, offset: int = 0, limit: int | None = None) -> DocumentPage:
        """A page of documents: id, path, status, chunks, updated time, metadata."""
        from kgrag.indexing.documents import list_documents

        return await list_documents(self.storage, offset, limit)

    async def export(self, *, timestamps: bool = True) -> ExportData:
        """The whole graph as canonical plain data (see :mod:`kgrag.maintenance.export`)."""
        from kgrag.maintenance.export import export_graph

        return await export_graph(self.storage, timestamps=timestamps)

    async def export_to(
        self, path: str | Path, *, format: str = "json", timestamps: bool = True
    ) -> list[Path]:
        """Write the export to ``path`` as json, csv, graphml, md or parquet; the files written.

        csv and parquet write a folder of tables (see :mod:`kgrag.maintenance.exports`).
        """
        from kgrag.maintenance.exports import export_to

        return await export_to(self.storage, path, fmt=format, timestamps=timestamps)

    @labelled("import")
    async def import_graph(
        self,
        given: str | Path | dict[str, Any],
        *,
        source: str = "kgrag",
        name: str | None = None,
        root: str | Path | None = None,
        vectors: str = "auto",
    ) -> ImportReport:
        """Import a graph: ``source`` is ``kgrag`` (an export), ``lightrag`` (a working
        directory) or ``kg`` (a user-built graph, a path or the dict itself, like
        LightRAG's ``insert_custom_kg``). See :mod:`kgrag.maintenance.importing`.
        """
        from kgrag.maintenance.importing.run import plan_documents, read_plan, run_plan

        plan = read_plan(source, given, self.tokenizer, name=name, root=root)
        return await self.indexing.write(
            "import",
            lambda indexer: run_plan(indexer.storage, indexer, plan, str(given), vectors),
            settle=plan_documents(plan),
            save_costs=True,
        )

    @labelled("dedupe")
    async def resolve_entities(
        self, *, min_score: float | None = None, apply: bool = False, use_llm: bool = False
    ) -> ResolutionReport:
        """Find names for one thing (``kgrag dedupe``; docs/resolution.md); ``apply`` merges them.

        Without ``apply`` nothing is written. Each applied group is a merge
        recorded with its evidence (``report.merges``; undo: :meth:`unmerge`).
        ``use_llm`` asks the chat model about undecided pairs (cached, counted).
        """
        from kgrag.curation.resolution import resolve_entities
        from kgrag.curation.resolution.apply import apply_groups

        chat = self.models.chat if use_llm else None
        report = await resolve_entities(self.storage, self.settings, min_score=min_score, chat=chat)
        if apply:
            await apply_groups(self, report)
        return report

    @labelled("repair")
    async def check(self, *, repair: bool = False) -> CheckReport:
        """Verify that every store agrees; ``repair`` first rebuilds vectors and lexical index."""
        from kgrag.maintenance import check, rebuild

        if repair:
            await self.indexing.write("repair", lambda ix: rebuild.repair(ix.storage, ix._embed))
        return await check.check(self.storage)

    @labelled("rebuild")
    async def rebuild(self, progress: ProgressSink | None = None) -> IndexReport:
        """Recompute the canonical graph from the stored (or cached) extractions."""
        from kgrag.maintenance import rebuild

        started = time.perf_counter()
        counting = CountingProgress(progress)

        async def run(indexer: Indexer) -> ProcessReport:
            await rebuild.reset_graph(indexer.storage)
            done = await indexer.process(progress=counting)
            await rebuild.drop_unowned_facts(indexer.storage)
            await rebuild.replay_curation(indexer.storage, indexer.applier)
            return done

        done = await self.indexing.write("rebuild", run, save_costs=True)
        return run_report(done, started, counting.counts)

    # -- querying ----------------------------------------------------------
    @property
    def engine(self) -> QueryEngine:
        """The query engine over this index (built on first use)."""
        if self._engine is None:
            from kgrag.retrieval.engine import QueryEngine

            m = self.models
            self._engine = QueryEngine(
                self.storage, m.chat, m.embed, m.rerank, self.tokenizer, self.settings
            )
        return self._engine

    def query_param(self, /, **overrides: Any) -> QueryParam:
        """A :class:`~kgrag.retrieval.param.QueryParam` with this index's defaults."""
        from kgrag.retrieval.param import QueryParam

        return QueryParam.from_settings(self.settings, **overrides)

    def _param(self, param: QueryParam | None, overrides: dict[str, Any]) -> QueryParam:
        return param.replace(**overrides) if param is not None else self.query_param(**overrides)

    async def query(
        self, /, question: str, param: QueryParam | None = None, **overrides: Any
    ) -> QueryResult:
        """Answer ``question``; ``print(result)`` prints the answer.

        ``overrides`` are :class:`~kgrag.retrieval.param.QueryParam` fields. For
        the answer in pieces, use :meth:`stream`. When the chat model fails
        or does not answer within ``query_llm_timeout``, the answer is
        extractive and ``result.fallback_reason`` says why.
        """
        if overrides.get("stream") or (param is not None and param.stream):
            raise ConfigError(
                "query() returns a QueryResult; for the answer in pieces use "
                "`async for piece in rag.stream(question, ...)`"
            )
        return await self.engine.query(question, self._param(param, overrides))

    def stream(
        self, /, question: str, param: QueryParam | None = None, **overrides: Any
    ) -> AnswerStream:
        """The answer to ``question`` in pieces: ``async for piece in rag.stream(q): ...``.

        Once it ends, the stream's ``result`` is the :class:`QueryResult`
        (and ``fallback_reason`` says why, when the answer is extractive).
        """
        overrides.pop("stream", None)
        param = self._param(param, overrides)
        return self.engine.stream(question, param.replace(stream=False))

    async def query_data(
        self,
        /,
        question: str,
        param: QueryParam | None = None,
        *,
        trace: bool = False,
        **overrides: Any,
    ) -> QueryData:
        """Structured retrieval result (no answer call); with ``trace``, every stage's drops."""
        return await self.engine.query_data(question, self._param(param, overrides), trace=trace)

    # -- status ------------------------------------------------------------
    async def status(self) -> dict[str, Any]:
        """Documents by status, graph size, the remembered settings and the model costs.

        Reads only: it builds no embedder and writes nothing (:mod:`kgrag.maintenance.status`).
        """
        from kgrag.maintenance.status import index_status

        costs = self.models.ledger.snapshot()
        return await index_status(self.storage, self.settings.store.workdir, costs)

    async def cost_report(self, since: str | dt.date | None = None, *, top: int = 10) -> CostReport:
        """What the models cost: ``total = initial index + updates + queries`` (docs/cost.md).

        ``since``: from that day (UTC) on; ``top``: the costliest documents listed.
        """
        from kgrag.maintenance.cost_report import cost_report

        await self._save_ledger()
        return await cost_report(self.storage, self.settings.cost.prices, since, top)
