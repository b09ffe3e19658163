"""Model services: every provider wrapped in the same stack.

Outermost first::

    cache -> retry with backoff -> shared concurrency limit -> cost ledger -> provider

The cache answers repeated prompts for free; retry sleeps between attempts
*outside* the limiter, so a backing-off call holds no slot; the limiter
(one for chat and rerank, one for embeddings, per kgrag instance unless
shared through :class:`~kgrag.llm.limiter.Limits`) serves urgent roles first;
the ledger times and counts every real attempt.

A caller may pass ``accept``, a judge of answers (the extractor rejects
malformed records). A rejected answer is returned but never cached; a
cached answer it rejects is dropped from the cache and asked for again.
Identical concurrent requests share one call, and the shared answer
counts as a cache hit, so sharing follows caching: only an answer the
leading caller would cache is shared, and a follower whose own judge
rejects it makes its own call.

Every answer loses the model's reasoning (:mod:`kgrag.llm.reasoning`):
answers as they come from the provider (so the cache holds answers
without it), cached ones, and streams piece by piece.

A query takes a *bounded* view (:meth:`ChatService.bounded`): until the
model has answered once in that query, each call must reach it (bring a
first piece) within the bound, so an unreachable model costs one short
wait; a slow model writing a long answer is not cut off.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from contextlib import aclosing
from typing import TypeVar

from kgrag.errors import ModelError, ModelTimeoutError
from kgrag.llm.base import (
    PRIORITY,
    ChatMessage,
    ChatProvider,
    ChatRequest,
    ChatResult,
    RerankProvider,
    Role,
)
from kgrag.llm.cache import LLMCache, cache_key
from kgrag.llm.embedding import EmbeddingService
from kgrag.llm.ledger import Ledger
from kgrag.llm.limiter import PriorityLimiter
from kgrag.llm.reasoning import ReasoningFilter, strip_reasoning
from kgrag.llm.retry import RetryPolicy, call_with_retry

__all__ = ["Accept", "ChatService", "EmbeddingService", "RerankService"]

Accept = Callable[[ChatResult], bool]
T = TypeVar("T")


async def _aclose(pieces: AsyncIterator[str]) -> None:
    """Close an async generator (a plain async iterator has nothing to close)."""
    close = getattr(pieces, "aclose", None)
    if close is not None:
        await close()


def _accepted(accept: Accept | None, result: ChatResult) -> bool:
    """Whether ``result`` may be cached and shared: not truncated, and ``accept`` agrees."""
    if result.finish_reason == "length":
        return False
    return accept is None or bool(accept(result))


class _Flight:
    """A call that identical concurrent requests wait for (see :meth:`ChatService._lead`)."""

    __slots__ = ("answer", "news", "reached")

    def __init__(self) -> None:
        self.answer: asyncio.Future[ChatResult | None] = asyncio.get_running_loop().create_future()
        self.news = asyncio.Event()  # set once the model answers the leader, or the call ends
        self.reached = False  # the model has answered the leader (its first piece came)

    def reach(self) -> None:
        self.reached = True
        self.news.set()

    def settle(self, shared: ChatResult | None) -> None:
        """The leader is done: ``shared`` for the followers (None: make your own call)."""
        if not self.answer.done():
            self.answer.set_result(shared)
        self.news.set()


def _without_reasoning(result: ChatResult) -> ChatResult:
    """``result`` with its reasoning blocks taken out of the text."""
    text = strip_reasoning(result.text)
    return result if text == result.text else dataclasses.replace(result, text=text)


async def _filtered(first: str | None, pieces: AsyncIterator[str]) -> AsyncGenerator[str, None]:
    """A stream's pieces without reasoning; a block split across pieces never leaks."""
    if first is None:
        return
    reply = ReasoningFilter()
    if out := reply.feed(first):
        yield out
    async for piece in pieces:
        if out := reply.feed(piece):
            yield out
    if out := reply.end():
        yield out


def _nothing() -> None:
    """The ``reach`` of a call nobody waits for."""


# A call to the model: (request, reach) -> answer; ``reach()`` once the model answers.
_Call = Callable[[ChatRequest, Callable[[], None]], Awaitable[ChatResult]]


class ChatService:
    """Chat calls through cache, retry, limiter and ledger."""

    def __init__(
        self,
        provider: ChatProvider,
        *,
        cache: LLMCache | None,
        limiter: PriorityLimiter,
        ledger: Ledger,
        retry: RetryPolicy | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ):
        self.provider = provider
        self.cache, self.limiter, self.ledger = cache, limiter, ledger
        self.retry = retry or RetryPolicy()
        self.temperature, self.max_tokens, self.timeout = temperature, max_tokens, timeout
        self._inflight: dict[str, _Flight] = {}
        self._bound: float | None = None
        self._reached = False  # a bounded view: the model has answered in this query
        self.failure: str | None = None  # why a bounded view gave up (see bounded())
        self._failed: ModelError | None = None  # the error behind ``failure``

    def bounded(self, seconds: float) -> ChatService:
        """A view of this service for one query, which someone waits for.

        The bound is on *reaching* the model, not on its writing: until the
        model has answered once in this query, a call, retries included,
        must bring its first piece within ``seconds``. A :meth:`chat` call
        is then made as a stream (when the provider streams) and its pieces
        joined, so a slow but working model may take as long as it needs
        (within the per-call ``timeout``) while an unreachable one is given
        up on after ``seconds``. Once a call has been answered, later calls
        run as ordinary calls. Cache hits and answers shared with an
        identical call in flight do not count as answers of the model. A
        provider that gives its answer as one piece (a chat function) or
        cannot stream is bounded over its whole call.

        Once a call has failed or run out of time, :attr:`failure` says why
        and later calls fail at once (caused by the first error, so
        :func:`kgrag.llm.failures.public_reason` can tell what happened),
        so a query waits for an unreachable model only once. The view shares the provider, cache, in-flight
        calls, limiter and ledger.
        """
        view = copy.copy(self)
        view._bound, view._reached, view.failure, view._failed = seconds, False, None, None
        return view

    async def _bounded(self, make: Callable[[asyncio.Timeout | None], Awaitable[T]]) -> T:
        """``make(scope)`` under the view's bound, until the model answers; failures remembered.

        ``scope`` is the bound (lifted with ``reschedule(None)`` once the
        model answers), or None when the model has already answered.
        """
        if self.failure is not None:
            raise ModelError(self.failure) from self._failed
        try:
            if self._reached:
                return await make(None)
            async with asyncio.timeout(self._bound) as scope:
                return await make(scope)
        except TimeoutError as exc:
            self.failure = (
                f"the chat model ({self.identity}) did not answer within {self._bound:g} s"
            )
            self._failed = ModelTimeoutError(self.failure)
            raise self._failed from exc
        except ModelError as exc:
            self.failure = f"the chat model ({self.identity}) failed: {exc}"
            self._failed = exc
            raise

    @property
    def identity(self) -> str:
        return self.provider.identity

    def _request(
        self,
        messages: Sequence[ChatMessage],
        role: Role,
        json_mode: bool,
        max_tokens: int | None,
    ) -> ChatRequest:
        return ChatRequest(
            messages=list(messages),
            role=role,
            json_mode=json_mode,
            max_tokens=max_tokens or self.max_tokens,
            temperature=self.temperature,
        )

    async def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        role: Role = "answer",
        json_mode: bool = False,
        max_tokens: int | None = None,
        use_cache: bool = True,
        accept: Accept | None = None,
        tag: str | None = None,
    ) -> ChatResult:
        """One answer. Identical concurrent requests share one call.

        ``tag`` is stored with a cached answer (the extractor tags answers
        with their chunk id) so they can be purged with what they came from.

        ``accept`` judges answers: one it rejects is returned but not
        cached, and a cached or shared one it rejects is not used (a
        rejected cache entry is deleted). Without a cache it is not called.
        """
        request = self._request(messages, role, json_mode, max_tokens)
        if self._bound is None:
            return await self._chat(request, use_cache, accept, tag, None)
        return await self._bounded(lambda scope: self._chat(request, use_cache, accept, tag, scope))

    async def _chat(
        self,
        request: ChatRequest,
        use_cache: bool,
        accept: Accept | None,
        tag: str | None,
        scope: asyncio.Timeout | None,
    ) -> ChatResult:
        """The answer, through the cache; ``scope``: the bound on reaching the model, if any."""
        call = self._caller(scope)
        if self.cache is None or not use_cache:
            result = await call(request, _nothing)
        else:
            result = await self._through_cache(request, accept, tag, scope, call)
        if not result.cached:
            self._reached = True
        return result

    def _caller(self, scope: asyncio.Timeout | None) -> _Call:
        """How to ask the model: as a stream read to its end while the bound ``scope`` holds."""
        if scope is None or not callable(getattr(self.provider, "stream", None)):
            return self._call
        return lambda request, reach: self._joined(request, scope, reach)

    async def _through_cache(
        self,
        request: ChatRequest,
        accept: Accept | None,
        tag: str | None,
        scope: asyncio.Timeout | None,
        call: _Call,
    ) -> ChatResult:
        key = cache_key(self.identity, request)
        flight = self._inflight.get(key)
        if flight is not None:
            shared = await self._follow(flight, scope)
            if shared is not None and _accepted(accept, shared):
                self.ledger.record_hit(request.role, model=self.identity)
                return dataclasses.replace(shared, cached=True)
        return await self._lead(key, request, accept, tag, call)

    async def _cached(self, key: str, accept: Accept | None) -> ChatResult | None:
        """The cached answer under ``key`` if ``accept`` takes it; a rejected one is deleted."""
        if self.cache is None:
            return None
        hit = await self.cache.get(key)
        if hit is None:
            return None
        hit = _without_reasoning(hit)  # cached by an older version that kept it
        if not _accepted(accept, hit):
            await self.cache.discard(key)
            return None
        return hit

    @staticmethod
    async def _follow(flight: _Flight, scope: asyncio.Timeout | None) -> ChatResult | None:
        """The leader's answer; under a bound, wait within it only until the model answers it.

        Once the model has answered the leader, the follower waits for the
        rest unbounded, and makes its own call unbounded if it must.
        """
        if scope is not None:
            await flight.news.wait()
            if flight.reached and not scope.expired():
                scope.reschedule(None)
        return await asyncio.shield(flight.answer)

    async def _lead(
        self,
        key: str,
        request: ChatRequest,
        accept: Accept | None,
        tag: str | None,
        call: _Call,
    ) -> ChatResult:
        """Read the cache, else make the call; others with the same key wait for either.

        The flight is registered before the cache is read: a store whose reads
        may overtake a commit in flight (a server) must not let a second
        request miss both the cache and the flight of the first.
        """
        flight = _Flight()
        self._inflight.setdefault(key, flight)
        if self._bound is not None and self._reached:
            flight.reach()  # the model has answered this query: followers need no bound
        shared: ChatResult | None = None
        try:
            shared = await self._cached(key, accept)
            if shared is not None:
                self.ledger.record_hit(request.role, model=self.identity)
                return shared
            result = await call(request, flight.reach)
            if _accepted(accept, result):
                if self.cache is not None:
                    await self.cache.put(key, result, request.role, tag=tag)
                shared = result
            return result
        finally:
            if self._inflight.get(key) is flight:
                del self._inflight[key]
            # Followers get None after a failure or a rejected answer and make their own call.
            flight.settle(shared)

    async def _call(self, request: ChatRequest, reach: Callable[[], None] = _nothing) -> ChatResult:
        result = await call_with_retry(self.retry, lambda: self._attempt(request))
        reach()
        return result

    async def _attempt(self, request: ChatRequest) -> ChatResult:
        async with self.limiter.slot(PRIORITY.get(request.role, 10)):
            with self.ledger.timed(request.role, model=self.identity) as usage:
                try:
                    async with asyncio.timeout(self.timeout):
                        result = await self.provider.chat(request)
                except TimeoutError as exc:
                    raise ModelTimeoutError(
                        f"{self.identity}: no answer within {self.timeout} s"
                    ) from exc
                usage["prompt_tokens"] = result.prompt_tokens
                usage["completion_tokens"] = result.completion_tokens
        return _without_reasoning(result)

    async def _joined(
        self, request: ChatRequest, scope: asyncio.Timeout, reach: Callable[[], None]
    ) -> ChatResult:
        """A chat answer asked for as a stream: ``scope`` (the bound) covers the first piece.

        Failures before the first piece are retried within the bound; then
        the bound is lifted and the rest must come within the per-call
        ``timeout``. The answer is what :meth:`_attempt` would give: the
        joined text (reasoning blocks dropped), the stream's
        token counts and finish reason. The ledger records one call.
        """
        usage = ChatResult(text="")
        start = time.perf_counter()
        pieces, first = await call_with_retry(self.retry, lambda: self._open_stream(request, usage))
        if not scope.expired():
            scope.reschedule(None)
        self._reached = True
        reach()
        parts = [] if first is None else [first]
        failed = False
        try:
            async with asyncio.timeout(self.timeout):
                parts.extend([piece async for piece in pieces])
        except TimeoutError as exc:
            failed = True
            raise ModelTimeoutError(
                f"{self.identity}: the answer did not end within {self.timeout} s"
            ) from exc
        except Exception:
            failed = True
            raise
        finally:
            await self._end_stream(pieces, request.role, usage, start, failed)
        return ChatResult(
            text=strip_reasoning("".join(parts)),
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            finish_reason=usage.finish_reason,
        )

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        role: Role = "answer",
        max_tokens: int | None = None,
    ) -> AsyncGenerator[str, None]:
        """Yield the answer in pieces (never cached), without the model's reasoning.

        Failures before the first piece are retried; later ones propagate.
        The concurrency slot is held until the stream ends or is closed, so
        a caller that may stop early should wrap it in ``contextlib.aclosing``.
        """
        request = self._request(messages, role, False, max_tokens)
        usage = ChatResult(text="")
        start = time.perf_counter()

        def opening() -> Awaitable[tuple[AsyncIterator[str], str | None]]:
            return call_with_retry(self.retry, lambda: self._open_stream(request, usage))

        if self._bound is not None:
            pieces, first = await self._bounded(lambda _scope: opening())
            self._reached = True
        else:
            pieces, first = await opening()
        failed = False
        try:
            async with aclosing(_filtered(first, pieces)) as answer:
                async for piece in answer:
                    yield piece
        except Exception:
            failed = True
            raise
        finally:
            await self._end_stream(pieces, role, usage, start, failed)

    async def _open_stream(
        self, request: ChatRequest, usage: ChatResult
    ) -> tuple[AsyncIterator[str], str | None]:
        """Take a slot and read the first piece; on failure give the slot back.

        On success the slot stays taken and the ledger counts the call in
        flight; :meth:`_end_stream` gives both back when the stream ends.
        """
        await self.limiter.acquire(PRIORITY.get(request.role, 10))
        self.ledger.begin(request.role)
        pieces = self.provider.stream(request, usage=usage)
        started = time.perf_counter()
        try:
            try:
                first = await anext(pieces)
            except StopAsyncIteration:
                first = None
        except BaseException:
            self.ledger.record(
                request.role,
                model=self.identity,
                seconds=time.perf_counter() - started,
                error=True,
            )
            try:
                await _aclose(pieces)
            finally:
                self.ledger.end(request.role)
                self.limiter.release()
            raise
        return pieces, first

    async def _end_stream(
        self, pieces: AsyncIterator[str], role: Role, usage: ChatResult, start: float, failed: bool
    ) -> None:
        """Close a stream :meth:`_open_stream` opened: slot back, one call in the ledger."""
        try:
            await _aclose(pieces)
        finally:
            self.limiter.release()
            self.ledger.end(role)
            self.ledger.record(
                role,
                model=self.identity,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                seconds=time.perf_counter() - start,
                error=failed,
            )

    async def aclose(self) -> None:
        await self.provider.aclose()


class RerankService:
    """Rerank calls through retry, limiter and ledger (role "rerank")."""

    def __init__(
        self,
        provider: RerankProvider,
        *,
        limiter: PriorityLimiter,
        ledger: Ledger,
        retry: RetryPolicy | None = None,
    ):
        self.provider, self.limiter, self.ledger = provider, limiter, ledger
        self.retry = retry or RetryPolicy()

    @property
    def identity(self) -> str:
        return self.provider.identity

    async def rerank(
        self, query: str, documents: Sequence[str], top_n: int | None = None
    ) -> list[tuple[int, float]]:
        """(index into documents, score), best first; at most ``top_n``."""
        docs = list(documents)
        if not docs:
            return []
        return await call_with_retry(self.retry, lambda: self._attempt(query, docs, top_n))

    async def _attempt(
        self, query: str, docs: list[str], top_n: int | None
    ) -> list[tuple[int, float]]:
        async with self.limiter.slot(PRIORITY["rerank"]):
            with self.ledger.timed("rerank", model=self.identity) as usage:
                usage["prompt_tokens"] = (len(query) * len(docs) + sum(map(len, docs))) // 4
                return await self.provider.rerank(query, docs, top_n)

    async def aclose(self) -> None:
        await self.provider.aclose()
