""":class:`SyncKGRag`: the :class:`~kgrag.api.facade.KGRag` façade for code without an event loop.

Every call runs on a private event loop (:class:`asyncio.Runner`); a
stream is driven piece by piece on the same loop (:class:`SyncAnswerStream`).

Each method is derived from the :class:`KGRag` method of the same name by one
of three helpers, never written twice: :func:`blocking` (a coroutine method,
run to its end), :func:`streaming` (an answer stream, as a plain iterator)
and :func:`forwarded` (a plain method, called as it is). Each copies the
method's signature and docstring, so ``help()`` shows them; its static type
is derived from the async method's through a ``ParamSpec``, so type checkers
and IDEs see the same parameters with no second copy to keep in step. The
public names left out on purpose are :data:`ASYNC_ONLY`; a test fails when a
public :class:`KGRag` name is in neither.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from kgrag.api.facade import KGRag

if TYPE_CHECKING:
    from kgrag.config.settings import Settings
    from kgrag.llm.adapters import ChatModel, EmbeddingModel, RerankModel
    from kgrag.llm.limiter import Limits
    from kgrag.retrieval.answer.stream import AnswerStream
    from kgrag.retrieval.param import QueryResult
    from kgrag.storage.base import Storage

P = ParamSpec("P")
T = TypeVar("T")

# Public names of KGRag with no blocking counterpart, and why.
ASYNC_ONLY: dict[str, str] = {
    "storage": "the store's methods are coroutines",
    "models": "the model services' methods are coroutines",
    "indexer": "the indexer's methods are coroutines",
    "extractor": "the extractor's methods are coroutines",
    "engine": "the query engine's methods are coroutines",
    "writing": "the writer lease is an async context manager",
    "tokenizer": "a part of the open index; reach it through .rag",
    "from_index": "a part of the open index; reach it through .rag",
    "on_writer_wait": "a hook of the async writer lease; set it on .rag",
    "indexing": "the write path (IndexingService); its calls are KGRag's methods",
}
# Public names of SyncKGRag with no async counterpart.
SYNC_ONLY = frozenset({"rag"})


def _derived(call: Callable[..., object], method: Callable[..., object], returns: str = "") -> None:
    """Give ``call`` the name, docstring and signature of ``method`` (``returns``: its result)."""
    signature = inspect.signature(method)
    if returns:
        signature = signature.replace(return_annotation=returns)
    call.__name__ = method.__name__
    call.__qualname__ = f"SyncKGRag.{method.__name__}"
    call.__doc__ = method.__doc__
    call.__signature__ = signature  # type: ignore[attr-defined]


def blocking(
    method: Callable[Concatenate[KGRag, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[SyncKGRag, P], T]:
    """``method`` run to its end on the private loop."""

    def call(self: SyncKGRag, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(method(self._rag, *args, **kwargs))

    _derived(call, method)
    return call


def streaming(
    method: Callable[Concatenate[KGRag, P], AnswerStream], doc: str
) -> Callable[Concatenate[SyncKGRag, P], SyncAnswerStream]:
    """``method``'s stream as a :class:`SyncAnswerStream` (``doc``: how to use it)."""

    def call(self: SyncKGRag, /, *args: P.args, **kwargs: P.kwargs) -> SyncAnswerStream:
        return SyncAnswerStream(self._runner, method(self._rag, *args, **kwargs))

    _derived(call, method, returns="SyncAnswerStream")
    call.__doc__ = doc
    return call


def forwarded(method: Callable[Concatenate[KGRag, P], T]) -> Callable[Concatenate[SyncKGRag, P], T]:
    """``method`` (not a coroutine) called on the async object as it is."""

    def call(self: SyncKGRag, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return method(self._rag, *args, **kwargs)

    _derived(call, method)
    return call


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
        chat: ChatModel | None = None,
        embed: EmbeddingModel | None = None,
        rerank: RerankModel | None = None,
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

    open = blocking(KGRag.open)
    # indexing and documents
    insert = blocking(KGRag.insert)
    index_paths = blocking(KGRag.index_paths)
    index_documents = blocking(KGRag.index_documents)
    retry_failed = blocking(KGRag.retry_failed)
    enqueue_paths = blocking(KGRag.enqueue_paths)
    work = blocking(KGRag.work)
    delete = blocking(KGRag.delete)
    set_disabled = blocking(KGRag.set_disabled)
    documents = blocking(KGRag.documents)
    # the whole index
    export = blocking(KGRag.export)
    export_to = blocking(KGRag.export_to)
    import_graph = blocking(KGRag.import_graph)
    resolve_entities = blocking(KGRag.resolve_entities)
    check = blocking(KGRag.check)
    rebuild = blocking(KGRag.rebuild)
    status = blocking(KGRag.status)
    cost_report = blocking(KGRag.cost_report)
    # querying
    query_param = forwarded(KGRag.query_param)
    query = blocking(KGRag.query)
    query_data = blocking(KGRag.query_data)
    stream = streaming(
        KGRag.stream, "The answer in pieces, as a plain iterator (``for piece in rag.stream(q)``)."
    )
    # curation (kgrag.curation.facade.CurationMethods)
    merge_entities = blocking(KGRag.merge_entities)
    merge_groups = blocking(KGRag.merge_groups)
    unmerge = blocking(KGRag.unmerge)
    merges = blocking(KGRag.merges)
    split_entity = blocking(KGRag.split_entity)
    unsplit = blocking(KGRag.unsplit)
    splits = blocking(KGRag.splits)
    create_entity = blocking(KGRag.create_entity)
    edit_entity = blocking(KGRag.edit_entity)
    clear_entity_edits = blocking(KGRag.clear_entity_edits)
    rename_entity = blocking(KGRag.rename_entity)
    delete_entity = blocking(KGRag.delete_entity)
    restore_entity = blocking(KGRag.restore_entity)
    create_relation = blocking(KGRag.create_relation)
    edit_relation = blocking(KGRag.edit_relation)
    delete_relation = blocking(KGRag.delete_relation)
    restore_relation = blocking(KGRag.restore_relation)


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
