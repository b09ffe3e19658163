""":class:`SyncKGRag`: the :class:`~kgrag.api.facade.KGRag` façade for code without an event loop.

Every call runs on a private event loop (:class:`asyncio.Runner`); a
stream is driven piece by piece on the same loop (:class:`SyncAnswerStream`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from kgrag.curation.facade import SyncCurationMethods

if TYPE_CHECKING:
    import datetime as dt

    from kgrag.api.facade import KGRag
    from kgrag.config.settings import Settings
    from kgrag.curation.resolution.report import ResolutionReport
    from kgrag.indexing.changes import ChangeStats
    from kgrag.indexing.enqueue import EnqueueReport
    from kgrag.indexing.progress import ProgressSink
    from kgrag.indexing.report import IndexReport
    from kgrag.indexing.worker import WorkerOptions, WorkerReport
    from kgrag.llm.adapters import ChatModel, EmbeddingModel, RerankModel
    from kgrag.llm.limiter import Limits
    from kgrag.maintenance.check import CheckReport
    from kgrag.maintenance.cost_report import CostReport
    from kgrag.maintenance.importing.model import ImportReport
    from kgrag.retrieval.answer.stream import AnswerStream
    from kgrag.retrieval.param import QueryParam, QueryResult
    from kgrag.storage.base import Storage
    from kgrag.types import Document

T = TypeVar("T")


class SyncKGRag(SyncCurationMethods):
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
        chat: ChatModel | None = None,
        embed: EmbeddingModel | None = None,
        rerank: RerankModel | None = None,
        storage: Storage | None = None,
        limits: Limits | None = None,
        **overrides: Any,
    ):
        from kgrag.api.facade import KGRag  # the façade imports this module to re-export it

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

    def enqueue_paths(
        self, paths: Iterable[str | Path], *, metadata: dict[str, Any] | None = None
    ) -> tuple[EnqueueReport, list[str]]:
        return self._run(self._rag.enqueue_paths(paths, metadata=metadata))

    def work(self, options: WorkerOptions | None = None) -> WorkerReport:
        return self._run(self._rag.work(options))

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

    def export_to(
        self, path: str | Path, *, format: str = "json", timestamps: bool = True
    ) -> list[Path]:
        return self._run(self._rag.export_to(path, format=format, timestamps=timestamps))

    def import_graph(
        self,
        given: str | Path | dict[str, Any],
        *,
        source: str = "kgrag",
        name: str | None = None,
        root: str | Path | None = None,
        vectors: str = "auto",
    ) -> ImportReport:
        return self._run(
            self._rag.import_graph(given, source=source, name=name, root=root, vectors=vectors)
        )

    def resolve_entities(
        self, *, min_score: float | None = None, apply: bool = False, use_llm: bool = False
    ) -> ResolutionReport:
        return self._run(
            self._rag.resolve_entities(min_score=min_score, apply=apply, use_llm=use_llm)
        )

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

    def cost_report(self, since: str | dt.date | None = None, *, top: int = 10) -> CostReport:
        return self._run(self._rag.cost_report(since, top=top))


class SyncAnswerStream(Iterator[str]):
    """:class:`~kgrag.retrieval.answer.stream.AnswerStream` driven piece by piece on a private loop."""

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
