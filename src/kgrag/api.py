"""The ``KGRag`` façade: the one object most users touch.

    async with KGRag(Settings(workdir="./index")) as rag:
        await rag.index_paths(["docs/"])
        print(await rag.query("Who founded the company?"))
        async for piece in rag.stream("And when?"):
            print(piece, end="")

``SyncKGRag`` offers the same methods for code without an event loop.
Settings are read from the environment only when no ``Settings`` object is
passed, at construction time. Models and the store may be brought along
(``KGRag(settings, chat=..., embed=..., rerank=..., storage=...)``; see
docs/embedding.md).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Coroutine, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from kgrag.config import Settings
from kgrag.errors import ConfigError, NotOpenError
from kgrag.ingest.ids import doc_id, source_doc_id
from kgrag.ingest.loaders import LoadReport, load_paths
from kgrag.pipeline.indexer import IndexDeps, Indexer
from kgrag.pipeline.progress import CountingProgress, ProgressCounts, ProgressSink
from kgrag.types import Document

if TYPE_CHECKING:
    from kgrag.extract.base import Extractor
    from kgrag.lifecycle.check import CheckReport
    from kgrag.llm.factory import Models
    from kgrag.llm.limiter import Limits
    from kgrag.pipeline.changes import ChangeStats
    from kgrag.query.engine import QueryEngine
    from kgrag.query.param import QueryParam, QueryResult
    from kgrag.query.stream import AnswerStream
    from kgrag.storage.base import Storage
    from kgrag.tokenizer import Tokenizer

T = TypeVar("T")
NOT_OPEN = "KGRag is not open: use `async with KGRag(...) as rag:` or `await rag.open()`"


@dataclass
class IndexReport:
    """What one ``index`` / ``insert`` call did (lists of document ids)."""

    documents: int = 0  # documents queued: new, updated, moved, requeued
    new: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
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


class _WhenOpen(Generic[T]):
    """An attribute :meth:`KGRag.open` sets: read before that, a clear :class:`NotOpenError`."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _WhenOpen[T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> T | _WhenOpen[T]:
        if obj is None:
            return self
        try:
            return obj.__dict__[self.name]
        except KeyError:
            raise NotOpenError(NOT_OPEN) from None

    def __set__(self, obj: object, value: T) -> None:
        obj.__dict__[self.name] = value


class KGRag:
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

    storage: _WhenOpen[Storage] = _WhenOpen()
    models: _WhenOpen[Models] = _WhenOpen()
    indexer: _WhenOpen[Indexer] = _WhenOpen()
    tokenizer: _WhenOpen[Tokenizer] = _WhenOpen()
    extractor: _WhenOpen[Extractor] = _WhenOpen()

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        chat: Any = None,
        embed: Any = None,
        rerank: Any = None,
        storage: Storage | None = None,
        limits: Limits | None = None,
        **overrides: Any,
    ):
        base = settings if settings is not None else Settings()
        self.settings = base.with_overrides(**overrides)
        self._inject = _given_models(chat, embed, rerank)
        self._given_storage = storage
        self._limits = limits
        self._opened = False
        self._engine: QueryEngine | None = None
        self.on_writer_wait: Any = None  # called with a message when another process writes

    # -- lifecycle ---------------------------------------------------------
    async def __aenter__(self) -> KGRag:
        await self.open()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def open(self, *, create: bool = True) -> None:
        """Open the workdir's index (``create=False``: refuse a workdir that holds none).

        Settings the index remembers (:mod:`kgrag.manifest`) fill in those
        not set; a set value contradicting them is a :class:`ConfigError`.
        No embedding model is built until something embeds.
        """
        from kgrag import manifest
        from kgrag.errors import NoIndexError
        from kgrag.llm.factory import build_models
        from kgrag.storage.registry import open_storage
        from kgrag.tokenizer import get_tokenizer

        s = self.settings
        self.storage = self._given_storage or open_storage(s.storage, Path(s.workdir))
        new, new_folder = manifest.is_new(self.storage, Path(s.workdir))
        if new and not create:
            raise NoIndexError(s.workdir)
        await self.storage.open()
        try:
            chat_given = getattr(self, "_inject", {}).get("chat") is not None
            applied = manifest.apply(s, await manifest.load(self.storage), chat_injected=chat_given)
            self.settings = s = applied.settings
            self.from_index = applied.from_index  # the fields the index's record filled in
            self.tokenizer = get_tokenizer(s.tokenizer)
            self.models = build_models(
                s, self.storage.kv("llm_cache"), limits=self._limits, **self._inject
            )
            if self.models.embed_built:  # an injected embedder: compare it at once
                await self._check_embedding_identity(record=False)
            self.extractor = self._build_extractor()
        except BaseException:
            await self.storage.close()
            if new:  # a configuration error leaves no empty index behind
                manifest.discard(self.storage, Path(s.workdir), new_folder)
            raise
        self.indexer = self._new_indexer()
        self._engine = None
        self._ledger_saved: dict[str, dict[str, float]] = {}
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

    def _extractor_kind(self) -> str:
        """``llm`` or ``nlp``: 'auto' means llm when a chat model exists (configured or given)."""
        if self.settings.extractor == "auto" and self.models.chat is not None:
            return "llm"
        return self.settings.resolved_extractor()

    def _build_extractor(self):
        """The extractor; without a chat model, the LLM one is a stand-in that fails on use.

        So an index built with an LLM can still be read, queried, checked
        and exported where no LLM is configured; indexing into it says why not.
        """
        kind = self._extractor_kind()
        if kind == "nlp":
            from kgrag.extract.nlp import NLPExtractor

            return NLPExtractor()
        if self.models.chat is None:
            from kgrag.extract.missing import MissingChatExtractor

            remembered = "extractor" in getattr(self, "from_index", [])
            return MissingChatExtractor(
                ConfigError(
                    (
                        "this index was built with the LLM extractor, which needs"
                        if remembered
                        else "extractor 'llm' needs"
                    )
                    + " a chat model: set KGRAG_LLM_PROVIDER and "
                    "KGRAG_LLM_BASE_URL (or OPENAI_BASE_URL / OPENAI_API_KEY), "
                    "or use KGRAG_EXTRACTOR=nlp"
                )
            )
        from kgrag.extract.llm_extractor import LLMExtractor

        return LLMExtractor.from_settings(self.models.chat, self.settings, self.tokenizer)

    def _new_indexer(self) -> Indexer:
        return Indexer(
            IndexDeps(
                storage=self.storage,
                extractor=self.extractor,
                extractor_kind=self._extractor_kind(),
                chat=self.models.chat,
                embed=self.models.embed,
                tokenizer=self.tokenizer,
                settings=self.settings,
            )
        )

    async def _settle_settings(self, docs: list[Document]) -> None:
        """Before an indexing run embeds anything: record (first run) and check the settings.

        The first run into a workdir settles the language (detected when
        unset) and records the settings (:func:`kgrag.manifest.settle`); a
        changed language rebuilds what depends on it (the local embedder's
        default, the prompts). Every run compares the embedder's identity.
        """
        from kgrag import manifest
        from kgrag.extract.missing import MissingChatExtractor
        from kgrag.llm.factory import build_models

        if isinstance(self.extractor, MissingChatExtractor):
            raise self.extractor.error
        settled = await manifest.settle(self.storage, self.settings, docs)
        if settled is not self.settings:
            self.settings, old = settled, self.models
            self.models = build_models(
                settled,
                self.storage.kv("llm_cache"),
                ledger=old.ledger,
                limits=old.limits,
                **getattr(self, "_inject", {}),
            )
            await old.aclose()
            self.extractor = self._build_extractor()
            self.indexer = self._new_indexer()
            self._engine = None
        await self._check_embedding_identity()

    async def _check_embedding_identity(self, *, record: bool = True) -> None:
        """Refuse an embedder whose vectors would not compare with the stored ones.

        Builds the embedding provider, so it runs when something is about to
        embed (an indexing run) or the embedder was given, never for status.
        ``record``: store the identity when the index has none yet.
        """
        # Provider and model decide what vectors mean; the host serving them does not.
        identity = self.models.embed.identity.split("@", 1)[0]
        stored = await self.storage.get_meta("embedding_identity")
        if stored is None:
            if record:
                await self.storage.set_meta("embedding_identity", identity)
        elif stored.split("@", 1)[0] != identity:
            raise ConfigError(
                f"this index was built with embeddings from {stored!r}, but the "
                f"configured embedder is {identity!r}; vectors would not be "
                "comparable. Use the same embedding settings or a new workdir."
            )

    async def _save_ledger(self) -> None:
        """Add this session's model costs (since the last save) to the stored totals.

        Nothing is written when nothing was spent (read-only commands never
        write), and the read and the write are one transaction, so two
        processes saving at once both count.
        """
        now = self.models.ledger.snapshot()
        delta = {
            role: {f: v - self._ledger_saved.get(role, {}).get(f, 0) for f, v in row.items()}
            for role, row in now.items()
        }
        delta = {role: row for role, row in delta.items() if any(row.values())}
        if not delta:
            return
        async with self.storage.transaction():
            total = await self.storage.get_meta("ledger") or {}
            await self.storage.set_meta("ledger", _add_costs(total, delta))
        self._ledger_saved = now

    # -- indexing ----------------------------------------------------------
    def writing(self):
        """The workdir's writer lease (one writer process; calls in this process take turns)."""
        return self.storage.writer(wait=self.settings.wait_for_writer, on_wait=self.on_writer_wait)

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
        texts = _strings(texts)
        paths = _strings(file_paths) if file_paths is not None else ["unknown_source"] * len(texts)
        sources: list[str | None] = [*_strings(ids)] if ids is not None else [None] * len(texts)
        if not len(texts) == len(paths) == len(sources):
            raise ConfigError(
                f"insert(): {len(texts)} text(s), {len(paths)} file path(s) and "
                f"{len(sources)} id(s); give one of each per text"
            )
        docs = [
            Document(
                id=source_doc_id(src) if src else doc_id(t),
                content=t,
                file_path=p,
                source=src,
                metadata=dict(metadata or {}),
            )
            for t, p, src in zip(texts, paths, sources, strict=True)
        ]
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
        from kgrag.ingest.options import LoadOptions

        loaded = load_paths([str(p) for p in paths], LoadOptions.from_settings(self.settings))
        errors = [str(e) for e in loaded.errors]
        if strict and errors:
            return IndexReport(load_errors=errors)
        for doc in loaded.documents:
            doc.metadata = dict(metadata or {})
        if replace is not None:
            await self._mark_replacement(loaded.documents, replace)
        report = await self.index_documents(loaded.documents, progress=progress)
        report.load_errors = errors
        await self._note_rejected(loaded)
        return report

    async def _note_rejected(self, loaded: LoadReport) -> None:
        """Remember the files refused, with their reasons, for ``status`` (a later success clears one)."""
        before = await self.storage.get_meta("rejected_inputs") or {}
        stored = _rejections(before, loaded)
        if stored != before:
            await self.storage.set_meta("rejected_inputs", dict(sorted(stored.items())))

    async def _mark_replacement(self, docs: list[Document], replace: str) -> None:
        from kgrag.lifecycle.documents import resolve

        if len(docs) != 1:
            raise ConfigError(f"--replace needs exactly one new file, got {len(docs)}")
        docs[0].replaces = [r.id for r in await resolve(self.storage, [replace])]

    async def index_documents(
        self, docs: list[Document], progress: ProgressSink | None = None
    ) -> IndexReport:
        started = time.perf_counter()
        async with self.writing():
            await self._settle_settings(docs)
            queued = await self.indexer.enqueue(docs)
            counting = CountingProgress(progress)
            done = await self.indexer.process(progress=counting)
        await self._save_ledger()
        report = IndexReport(
            documents=len(queued.queued),
            new=queued.new,
            updated=queued.updated,
            moved=queued.moved,
            unchanged=queued.unchanged,
            duplicates=queued.duplicates,
            processed=done.processed,
            failed=done.failed,
            insert_s=time.perf_counter() - started,
            progress=counting.counts,
        )
        report.warnings = await self._warnings(done.processed)
        return report

    async def _warnings(self, ids: list[str]) -> dict[str, list[str]]:
        records = await self.storage.doc_status.get_many(ids)
        return {
            i: [*r.load_warnings, *r.warnings]
            for i, r in records.items()
            if r.warnings or r.load_warnings
        }

    async def retry_failed(self, progress: ProgressSink | None = None) -> IndexReport:
        """Retry failed documents and those with chunk warnings; resume interrupted ones."""
        started = time.perf_counter()
        counting = CountingProgress(progress)
        async with self.writing():
            done = await self.indexer.process(retry_failed=True, progress=counting)
        await self._save_ledger()
        report = IndexReport(
            processed=done.processed,
            failed=done.failed,
            insert_s=time.perf_counter() - started,
            progress=counting.counts,
        )
        report.warnings = await self._warnings(done.processed)
        return report

    # -- document lifecycle ---------------------------------------------------
    async def delete(
        self, ids: Iterable[str] = (), *, paths: Iterable[str] = (), purge_cache: bool = False
    ) -> tuple[list[str], ChangeStats]:
        """Remove documents (by id, source or path glob) from every store.

        ``purge_cache`` also drops the cached extraction answers of the chunks
        that no remaining document contains.
        """
        from kgrag.lifecycle import documents
        from kgrag.llm.cache import NAMESPACE, LLMCache

        async with self.writing():
            records = await documents.resolve(self.storage, ids, paths)
            stats = await documents.delete(self.indexer.applier, records)
            if purge_cache:
                await LLMCache(self.storage.kv(NAMESPACE)).purge_tags(stats.dead_chunks)
        await self._save_ledger()
        return [r.id for r in records], stats

    async def set_disabled(
        self, ids: Iterable[str] = (), disabled: bool = True, *, paths: Iterable[str] = ()
    ) -> list[str]:
        """Disable (or enable) documents: indexed, but not retrieved while disabled."""
        from kgrag.lifecycle import documents

        async with self.writing():
            records = await documents.resolve(self.storage, ids, paths)
            await documents.set_disabled(self.storage, records, disabled)
        return [r.id for r in records]

    async def documents(self, offset: int = 0, limit: int | None = None) -> dict[str, Any]:
        """A page of documents: id, path, status, chunks, updated time, metadata."""
        from kgrag.lifecycle.documents import list_documents

        return await list_documents(self.storage, offset, limit)

    async def export(self, *, timestamps: bool = True) -> dict[str, Any]:
        """The whole graph as canonical plain data (see :mod:`kgrag.lifecycle.export`)."""
        from kgrag.lifecycle.export import export_graph

        return await export_graph(self.storage, timestamps=timestamps)

    async def check(self, *, repair: bool = False) -> CheckReport:
        """Verify that every store agrees; ``repair`` first rebuilds vectors and lexical index."""
        from kgrag.lifecycle import check, rebuild

        if repair:
            async with self.writing():
                await rebuild.repair(self.storage, self.indexer._embed)
        return await check.check(self.storage)

    async def rebuild(self, progress: ProgressSink | None = None) -> IndexReport:
        """Recompute the canonical graph from the stored (or cached) extractions."""
        from kgrag.lifecycle import rebuild

        started = time.perf_counter()
        counting = CountingProgress(progress)
        async with self.writing():
            await rebuild.reset_graph(self.storage)
            done = await self.indexer.process(progress=counting)
            await rebuild.drop_unowned_facts(self.storage)
        await self._save_ledger()
        return IndexReport(
            processed=done.processed,
            failed=done.failed,
            insert_s=time.perf_counter() - started,
            progress=counting.counts,
        )

    # -- querying ----------------------------------------------------------
    @property
    def engine(self) -> QueryEngine:
        """The query engine over this index (built on first use)."""
        if self._engine is None:
            from kgrag.query.engine import QueryEngine

            m = self.models
            self._engine = QueryEngine(
                self.storage, m.chat, m.embed, m.rerank, self.tokenizer, self.settings
            )
        return self._engine

    def query_param(self, **overrides: Any) -> QueryParam:
        """A :class:`~kgrag.query.param.QueryParam` with this index's defaults."""
        from kgrag.query.param import QueryParam

        return QueryParam.from_settings(self.settings, **overrides)

    def _param(self, param: QueryParam | None, overrides: dict[str, Any]) -> QueryParam:
        return param.replace(**overrides) if param is not None else self.query_param(**overrides)

    async def query(
        self, question: str, param: QueryParam | None = None, **overrides: Any
    ) -> QueryResult:
        """Answer ``question``; ``print(result)`` prints the answer.

        ``overrides`` are :class:`~kgrag.query.param.QueryParam` fields. For
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
        self, question: str, param: QueryParam | None = None, **overrides: Any
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
        question: str,
        param: QueryParam | None = None,
        *,
        trace: bool = False,
        **overrides: Any,
    ) -> dict[str, Any]:
        """Structured retrieval result (no answer call); with ``trace``, every stage's drops."""
        return await self.engine.query_data(question, self._param(param, overrides), trace=trace)

    # -- status ------------------------------------------------------------
    async def status(self) -> dict[str, Any]:
        """Documents by status, graph size, the remembered settings and the model costs.

        Reads only: it builds no embedder and writes nothing.
        """
        from kgrag import manifest
        from kgrag.types import DocStatus

        ds = self.storage.doc_status
        docs = {s.value: [r.id for r in await ds.by_status(s)] for s in DocStatus}
        failed = [
            {"id": r.id, "file_path": r.file_path, "error": r.error}
            for r in await ds.by_status(DocStatus.FAILED)
        ]
        processed = await ds.by_status(DocStatus.PROCESSED)
        warnings = [
            {"id": r.id, "file_path": r.file_path, "warnings": [*r.load_warnings, *r.warnings]}
            for r in processed
            if r.warnings or r.load_warnings
        ]
        return {
            "workdir": str(self.settings.workdir),
            "documents": {k: {"count": len(v), "ids": v} for k, v in docs.items()},
            "failed": failed,
            "warnings": warnings,
            "disabled": [r.id for r in processed if r.disabled],
            "summaries_pending": await self.indexer.applier.pending.count(),
            "rejected_inputs": await self.storage.get_meta("rejected_inputs") or {},
            "graph": {
                "documents": len(docs["processed"]),
                "chunks": await self.storage.kv("text_chunks").count(),
                "entities": await self.storage.graph.node_count(),
                "relations": await self.storage.graph.edge_count(),
                "built_by": await self.storage.get_meta("extractors") or [],
            },
            "embedding": await self.storage.get_meta("embedding_identity"),
            "settings": await manifest.load(self.storage),
            "llm": self.models.ledger.snapshot(),
            "llm_all_time": await self.storage.get_meta("ledger") or {},
        }


def _add_costs(
    total: dict[str, dict[str, float]], delta: dict[str, dict[str, float]]
) -> dict[str, dict[str, float]]:
    """The stored all-time ledger plus one session's costs, field by field.

    ``wall_s`` adds up across sessions (one after the other), but a role
    whose stored calls predate it has no wall time to add to: it stays
    absent there rather than claim a wall time that leaves those calls out.
    """
    for role, row in delta.items():
        into = total.setdefault(role, {})
        wall_known = "wall_s" in into or not into.get("calls", 0)
        for name, value in row.items():
            if name != "wall_s" or wall_known:
                into[name] = into.get(name, 0) + value
    return total


def _rejections(before: dict[str, str], loaded: LoadReport) -> dict[str, str]:
    """The refused inputs after a load: gone files dropped, loaded ones cleared, new ones added."""
    stored = {p: r for p, r in before.items() if os.path.exists(p)}  # gone files are no news
    for doc in loaded.documents:
        stored.pop(doc.source or doc.file_path, None)
    for error in loaded.errors:
        path = os.path.abspath(getattr(error, "path", str(error)))
        stored[path] = getattr(error, "reason", str(error))
    return stored


def _strings(values: str | Iterable[str]) -> list[str]:
    """A list of strings; a lone string is one item, not its characters."""
    return [values] if isinstance(values, str) else list(values)


def _given_models(chat: Any, embed: Any, rerank: Any) -> dict[str, Any]:
    """The injected models as providers (functions adapted), keyed as build_models takes them."""
    from kgrag.llm.adapters import adapt_chat, adapt_embedding, adapt_rerank

    given: dict[str, Any] = {}
    if chat is not None:
        given["chat"] = adapt_chat(chat)
    if embed is not None:
        given["embed"] = adapt_embedding(embed)
    if rerank is not None:
        given["rerank"] = adapt_rerank(rerank)
    return given


class SyncKGRag:
    """:class:`KGRag` for code without an event loop: the same methods, blocking.

    ::

        with SyncKGRag(Settings(workdir="./index")) as rag:
            rag.index_paths(["docs/"])
            print(rag.query("Who founded the company?"))
            for piece in rag.stream("And when?"):
                print(piece, end="")

    Every call runs on a private event loop, so do not call it from inside
    a running loop (use :class:`KGRag` there). Arguments are those of the
    :class:`KGRag` method of the same name.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        chat: Any = None,
        embed: Any = None,
        rerank: Any = None,
        storage: Storage | None = None,
        limits: Limits | None = None,
        **overrides: Any,
    ):
        self._runner = asyncio.Runner()
        self._rag = KGRag(
            settings,
            chat=chat,
            embed=embed,
            rerank=rerank,
            storage=storage,
            limits=limits,
            **overrides,
        )

    @property
    def rag(self) -> KGRag:
        """The asynchronous object this one drives."""
        return self._rag

    @property
    def settings(self) -> Settings:
        return self._rag.settings

    def _run(self, call: Coroutine[Any, Any, T]) -> T:
        return self._runner.run(call)

    def open(self, *, create: bool = True) -> None:
        self._run(self._rag.open(create=create))

    def close(self) -> None:
        """Close the index and the private event loop."""
        try:
            self._run(self._rag.close())
        finally:
            self._runner.close()

    def __enter__(self) -> SyncKGRag:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def insert(
        self,
        texts: str | Iterable[str],
        file_paths: Iterable[str] | None = None,
        progress: ProgressSink | None = None,
        *,
        ids: Iterable[str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> IndexReport:
        return self._run(self._rag.insert(texts, file_paths, progress, ids=ids, metadata=metadata))

    def index_paths(
        self,
        paths: Iterable[str | Path],
        progress: ProgressSink | None = None,
        *,
        metadata: dict[str, Any] | None = None,
        replace: str | None = None,
        strict: bool = False,
    ) -> IndexReport:
        return self._run(
            self._rag.index_paths(
                paths, progress, metadata=metadata, replace=replace, strict=strict
            )
        )

    def index_documents(
        self, docs: list[Document], progress: ProgressSink | None = None
    ) -> IndexReport:
        return self._run(self._rag.index_documents(docs, progress))

    def retry_failed(self, progress: ProgressSink | None = None) -> IndexReport:
        return self._run(self._rag.retry_failed(progress))

    def delete(
        self, ids: Iterable[str] = (), *, paths: Iterable[str] = (), purge_cache: bool = False
    ) -> tuple[list[str], ChangeStats]:
        return self._run(self._rag.delete(ids, paths=paths, purge_cache=purge_cache))

    def set_disabled(
        self, ids: Iterable[str] = (), disabled: bool = True, *, paths: Iterable[str] = ()
    ) -> list[str]:
        return self._run(self._rag.set_disabled(ids, disabled, paths=paths))

    def documents(self, offset: int = 0, limit: int | None = None) -> dict[str, Any]:
        return self._run(self._rag.documents(offset, limit))

    def export(self, *, timestamps: bool = True) -> dict[str, Any]:
        return self._run(self._rag.export(timestamps=timestamps))

    def check(self, *, repair: bool = False) -> CheckReport:
        return self._run(self._rag.check(repair=repair))

    def rebuild(self, progress: ProgressSink | None = None) -> IndexReport:
        return self._run(self._rag.rebuild(progress))

    def query_param(self, **overrides: Any) -> QueryParam:
        return self._rag.query_param(**overrides)

    def query(
        self, question: str, param: QueryParam | None = None, **overrides: Any
    ) -> QueryResult:
        return self._run(self._rag.query(question, param, **overrides))

    def query_data(
        self,
        question: str,
        param: QueryParam | None = None,
        *,
        trace: bool = False,
        **overrides: Any,
    ) -> dict[str, Any]:
        return self._run(self._rag.query_data(question, param, trace=trace, **overrides))

    def stream(
        self, question: str, param: QueryParam | None = None, **overrides: Any
    ) -> SyncAnswerStream:
        """The answer in pieces, as a plain iterator (``for piece in rag.stream(q)``)."""
        return SyncAnswerStream(self._runner, self._rag.stream(question, param, **overrides))

    def status(self) -> dict[str, Any]:
        return self._run(self._rag.status())


class SyncAnswerStream(Iterator[str]):
    """:class:`~kgrag.query.stream.AnswerStream` driven piece by piece on a private loop."""

    def __init__(self, runner: asyncio.Runner, stream: AnswerStream):
        self._runner, self._stream, self._done = runner, stream, False

    @property
    def result(self) -> QueryResult | None:
        return self._stream.result

    @property
    def fallback_reason(self) -> str | None:
        return self._stream.fallback_reason

    def __iter__(self) -> SyncAnswerStream:
        return self

    def __next__(self) -> str:
        if self._done:
            raise StopIteration
        more, piece = self._runner.run(_next_piece(self._stream))
        if not more:
            self._done = True
            raise StopIteration
        return piece

    def close(self) -> None:
        """Stop early (frees the model call's concurrency slot)."""
        if not self._done:
            self._done = True
            self._runner.run(self._stream.aclose())


async def _next_piece(stream: AnswerStream) -> tuple[bool, str]:
    """(True, piece), or (False, "") at the end: a coroutine never raises StopAsyncIteration."""
    try:
        return True, await anext(stream)
    except StopAsyncIteration:
        return False, ""
