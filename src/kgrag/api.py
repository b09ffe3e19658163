"""The ``KGRag`` façade: the one object most users touch.

    async with KGRag(Settings(workdir="./index")) as rag:
        await rag.index_paths(["docs/"])
        answer = await rag.query("Who founded the company?")

``SyncKGRag`` offers the same methods for code without an event loop.
Settings are read from the environment only when no ``Settings`` object is
passed, at construction time.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgrag.config import Settings
from kgrag.errors import ConfigError
from kgrag.ingest.ids import doc_id, source_doc_id
from kgrag.ingest.loaders import load_paths
from kgrag.pipeline.indexer import IndexDeps, Indexer
from kgrag.pipeline.progress import ProgressSink
from kgrag.types import Document


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

    @property
    def ok(self) -> bool:
        return not self.failed and not self.load_errors


class KGRag:
    def __init__(self, settings: Settings | None = None, **overrides: Any):
        base = settings if settings is not None else Settings()
        self.settings = base.model_copy(update=overrides) if overrides else base
        self._opened = False
        self.on_writer_wait: Any = None  # called with a message when another process writes

    # -- lifecycle ---------------------------------------------------------
    async def __aenter__(self) -> KGRag:
        await self.open()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def open(self) -> None:
        from kgrag.llm.factory import build_models
        from kgrag.storage.registry import open_storage
        from kgrag.tokenizer import get_tokenizer

        s = self.settings
        Path(s.workdir).mkdir(parents=True, exist_ok=True)
        self.storage = open_storage(s.storage, Path(s.workdir))
        await self.storage.open()
        try:
            self.tokenizer = get_tokenizer(s.tokenizer)
            self.models = build_models(s, self.storage.kv("llm_cache"))
            await self._check_embedding_identity()
            self.extractor = self._build_extractor()
        except BaseException:
            await self.storage.close()
            raise
        self.indexer = Indexer(
            IndexDeps(
                storage=self.storage,
                extractor=self.extractor,
                extractor_kind=s.resolved_extractor(),
                chat=self.models.chat,
                embed=self.models.embed,
                tokenizer=self.tokenizer,
                settings=s,
            )
        )
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

    def _build_extractor(self):
        kind = self.settings.resolved_extractor()
        if kind == "nlp":
            from kgrag.extract.nlp import NLPExtractor

            return NLPExtractor()
        if self.models.chat is None:
            raise ConfigError(
                "extractor 'llm' needs a chat model: set KGRAG_LLM_PROVIDER and "
                "KGRAG_LLM_BASE_URL (or OPENAI_BASE_URL / OPENAI_API_KEY), "
                "or use KGRAG_EXTRACTOR=nlp"
            )
        from kgrag.extract.llm_extractor import LLMExtractor

        return LLMExtractor.from_settings(self.models.chat, self.settings, self.tokenizer)

    async def _check_embedding_identity(self) -> None:
        # Provider and model decide what vectors mean; the host serving them does not.
        identity = self.models.embed.identity.split("@", 1)[0]
        stored = await self.storage.get_meta("embedding_identity")
        if stored is None:
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
            for role, row in delta.items():
                into = total.setdefault(role, {})
                for field_name, value in row.items():
                    into[field_name] = into.get(field_name, 0) + value
            await self.storage.set_meta("ledger", total)
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

        ``ids`` are the documents' identities (a later text under the same id
        supersedes the earlier one); without them a text is known by its
        content. ``metadata`` is stored with every document of the call.
        """
        texts = [texts] if isinstance(texts, str) else list(texts)
        paths = list(file_paths) if file_paths is not None else ["unknown_source"] * len(texts)
        sources: list[str | None] = list(ids) if ids is not None else [None] * len(texts)
        if not len(texts) == len(paths) == len(sources):
            raise ConfigError("insert(): texts, file_paths and ids must have the same length")
        docs = [
            Document(
                id=source_doc_id(src) if src else doc_id(t),
                content=t,
                file_path=p,
                source=src,
                metadata=dict(metadata or {}),
            )
            for t, p, src in zip(texts, paths, sources, strict=False)
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

    async def _note_rejected(self, loaded) -> None:
        """Remember the files refused, with their reasons, for ``status`` (a later success clears one)."""
        before = await self.storage.get_meta("rejected_inputs") or {}
        stored = {p: r for p, r in before.items() if os.path.exists(p)}  # gone files are no news
        for doc in loaded.documents:
            stored.pop(doc.source or doc.file_path, None)
        for error in loaded.errors:
            path = os.path.abspath(getattr(error, "path", str(error)))
            stored[path] = getattr(error, "reason", str(error))
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
            queued = await self.indexer.enqueue(docs)
            done = await self.indexer.process(progress=progress)
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
        async with self.writing():
            done = await self.indexer.process(retry_failed=True, progress=progress)
        await self._save_ledger()
        report = IndexReport(
            processed=done.processed, failed=done.failed, insert_s=time.perf_counter() - started
        )
        report.warnings = await self._warnings(done.processed)
        return report

    # -- document lifecycle ---------------------------------------------------
    async def delete(
        self, ids: Iterable[str] = (), *, paths: Iterable[str] = (), purge_cache: bool = False
    ):
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

    async def check(self, *, repair: bool = False):
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
        async with self.writing():
            await rebuild.reset_graph(self.storage)
            done = await self.indexer.process(progress=progress)
            await rebuild.drop_unowned_facts(self.storage)
        await self._save_ledger()
        return IndexReport(
            processed=done.processed, failed=done.failed, insert_s=time.perf_counter() - started
        )

    # -- querying ----------------------------------------------------------
    @property
    def engine(self):
        if self._engine is None:
            from kgrag.query.engine import QueryEngine

            m = self.models
            self._engine = QueryEngine(
                self.storage, m.chat, m.embed, m.rerank, self.tokenizer, self.settings
            )
        return self._engine

    def query_param(self, **overrides: Any):
        """A :class:`~kgrag.query.param.QueryParam` with this index's defaults."""
        from kgrag.query.param import QueryParam

        return QueryParam.from_settings(self.settings, **overrides)

    async def query(self, question: str, param=None, **overrides: Any):
        """Answer ``question``: a ``QueryResult``, or an async iterator when streaming."""
        param = param.replace(**overrides) if param is not None else self.query_param(**overrides)
        return await self.engine.query(question, param)

    async def query_data(
        self, question: str, param=None, *, trace: bool = False, **overrides: Any
    ) -> dict[str, Any]:
        """Structured retrieval result (no answer call); with ``trace``, every stage's drops."""
        param = param.replace(**overrides) if param is not None else self.query_param(**overrides)
        return await self.engine.query_data(question, param, trace=trace)

    # -- status ------------------------------------------------------------
    async def status(self) -> dict[str, Any]:
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
            "llm": self.models.ledger.snapshot(),
            "llm_all_time": await self.storage.get_meta("ledger") or {},
        }


class SyncKGRag:
    """Blocking wrapper around :class:`KGRag` with a private event loop."""

    def __init__(self, settings: Settings | None = None, **overrides: Any):
        self._runner = asyncio.Runner()
        self._rag = KGRag(settings, **overrides)

    def __enter__(self) -> SyncKGRag:
        self._runner.run(self._rag.open())
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._runner.run(self._rag.close())
        finally:
            self._runner.close()

    def __getattr__(self, name: str):
        attr = getattr(self._rag, name)
        if not asyncio.iscoroutinefunction(attr):
            return attr
        return lambda *a, **kw: self._runner.run(attr(*a, **kw))
