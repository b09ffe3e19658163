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
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from kgrag.config import Settings
from kgrag.errors import ConfigError
from kgrag.ingest.ids import doc_id
from kgrag.ingest.loaders import load_paths
from kgrag.pipeline.indexer import IndexDeps, Indexer
from kgrag.pipeline.progress import ProgressSink
from kgrag.types import Document


@dataclass
class IndexReport:
    """What one ``index`` / ``insert`` call did."""

    documents: int = 0  # new documents accepted
    duplicates: list[str] = field(default_factory=list)
    load_errors: list[str] = field(default_factory=list)
    processed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str, str]] = field(default_factory=list)
    insert_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failed and not self.load_errors


class KGRag:
    def __init__(self, settings: Settings | None = None, **overrides: Any):
        base = settings if settings is not None else Settings()
        self.settings = base.model_copy(update=overrides) if overrides else base
        self._opened = False

    # -- lifecycle ---------------------------------------------------------
    async def __aenter__(self) -> "KGRag":
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
        self.indexer = Indexer(IndexDeps(
            storage=self.storage, extractor=self.extractor,
            extractor_kind=s.resolved_extractor(), chat=self.models.chat,
            embed=self.models.embed, tokenizer=self.tokenizer, settings=s))
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
                "or use KGRAG_EXTRACTOR=nlp")
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
                "comparable. Use the same embedding settings or a new workdir.")

    async def _save_ledger(self) -> None:
        """Add this session's model costs (since the last save) to the stored totals."""
        now = self.models.ledger.snapshot()
        total = await self.storage.get_meta("ledger") or {}
        for role, row in now.items():
            before = self._ledger_saved.get(role, {})
            into = total.setdefault(role, {})
            for field_name, value in row.items():
                into[field_name] = into.get(field_name, 0) + value - before.get(field_name, 0)
        self._ledger_saved = now
        await self.storage.set_meta("ledger", total)

    # -- indexing ----------------------------------------------------------
    async def insert(self, texts: str | Iterable[str], file_paths: Iterable[str] | None = None,
                     progress: ProgressSink | None = None) -> IndexReport:
        """Index raw texts (one document each)."""
        texts = [texts] if isinstance(texts, str) else list(texts)
        paths = list(file_paths) if file_paths is not None else ["unknown_source"] * len(texts)
        docs = [Document(id=doc_id(t), content=t, file_path=p) for t, p in zip(texts, paths)]
        return await self.index_documents(docs, progress=progress)

    async def index_paths(self, paths: Iterable[str | Path],
                          progress: ProgressSink | None = None) -> IndexReport:
        """Load files and folders (recursively) and index them."""
        loaded = load_paths([str(p) for p in paths])
        report = await self.index_documents(loaded.documents, progress=progress)
        report.load_errors = [str(e) for e in loaded.errors]
        return report

    async def index_documents(self, docs: list[Document],
                              progress: ProgressSink | None = None) -> IndexReport:
        started = time.perf_counter()
        queued = await self.indexer.enqueue(docs)
        done = await self.indexer.process(progress=progress)
        await self._save_ledger()
        return IndexReport(documents=len(queued.new), duplicates=queued.duplicates,
                           processed=done.processed, failed=done.failed,
                           insert_s=time.perf_counter() - started)

    async def retry_failed(self, progress: ProgressSink | None = None) -> IndexReport:
        """Retry failed documents and resume interrupted ones."""
        started = time.perf_counter()
        done = await self.indexer.process(retry_failed=True, progress=progress)
        await self._save_ledger()
        return IndexReport(processed=done.processed, failed=done.failed,
                           insert_s=time.perf_counter() - started)

    # -- querying ----------------------------------------------------------
    @property
    def engine(self):
        if self._engine is None:
            from kgrag.query.engine import QueryEngine

            m = self.models
            self._engine = QueryEngine(self.storage, m.chat, m.embed, m.rerank,
                                       self.tokenizer, self.settings)
        return self._engine

    def query_param(self, **overrides: Any):
        """A :class:`~kgrag.query.param.QueryParam` with this index's defaults."""
        from kgrag.query.param import QueryParam

        return QueryParam.from_settings(self.settings, **overrides)

    async def query(self, question: str, param=None, **overrides: Any):
        """Answer ``question``: a ``QueryResult``, or an async iterator when streaming."""
        param = param.replace(**overrides) if param is not None else self.query_param(**overrides)
        return await self.engine.query(question, param)

    async def query_data(self, question: str, param=None, *, trace: bool = False,
                         **overrides: Any) -> dict[str, Any]:
        """Structured retrieval result (no answer call); with ``trace``, every stage's drops."""
        param = param.replace(**overrides) if param is not None else self.query_param(**overrides)
        return await self.engine.query_data(question, param, trace=trace)

    # -- status ------------------------------------------------------------
    async def status(self) -> dict[str, Any]:
        from kgrag.types import DocStatus

        ds = self.storage.doc_status
        docs = {s.value: [r.id for r in await ds.by_status(s)] for s in DocStatus}
        failed = [{"id": r.id, "file_path": r.file_path, "error": r.error}
                  for r in await ds.by_status(DocStatus.FAILED)]
        return {
            "workdir": str(self.settings.workdir),
            "documents": {k: {"count": len(v), "ids": v} for k, v in docs.items()},
            "failed": failed,
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

    def __enter__(self) -> "SyncKGRag":
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
