"""A streamed answer: the pieces of text, then what became of the query.

:meth:`kgrag.KGRag.stream` returns an :class:`AnswerStream`::

    stream = rag.stream("Who is Scrooge?")
    async for piece in stream:
        print(piece, end="")
    if stream.fallback_reason:
        print("\\n(extractive:", stream.fallback_reason, ")")

Nothing runs before the first piece is asked for. Once the stream has
ended, :attr:`AnswerStream.result` is the :class:`~kgrag.retrieval.param.QueryResult`
the same query would have returned, its answer the joined pieces.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable

from kgrag.retrieval.param import QueryResult


class AnswerStream:
    """An async iterator of answer pieces, with the query's outcome once it ends.

    ``produce`` is the engine's generator function; it is called with the
    stream itself, and sets :attr:`result` before it yields its pieces.
    """

    def __init__(self, produce: Callable[[AnswerStream], AsyncGenerator[str, None]]):
        self.result: QueryResult | None = None
        self._pieces = produce(self)
        self._text: list[str] = []

    @property
    def extractive(self) -> bool:
        """Whether the answer is quoted from the documents instead of written by a model."""
        return self.result is not None and self.result.extractive

    @property
    def fallback_reason(self) -> str | None:
        """Why the chat model was not used, when it failed; else None."""
        return self.result.fallback_reason if self.result is not None else None

    def __aiter__(self) -> AnswerStream:
        return self

    async def __anext__(self) -> str:
        try:
            piece = await anext(self._pieces)
        except StopAsyncIteration:
            if self.result is not None and self.result.kind == "answer":
                self.result.answer = "".join(self._text)
            raise
        self._text.append(piece)
        return piece

    async def aclose(self) -> None:
        """Stop early: end the model call and give its concurrency slot back."""
        await self._pieces.aclose()
