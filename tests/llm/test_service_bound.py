"""A bounded view bounds reaching the model, not its writing (real HTTP servers on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from kgrag.errors import ModelError, ModelTimeoutError
from kgrag.llm.base import ChatRequest, ChatResult
from kgrag.llm.cache import LLMCache, MemoryKV, cache_key
from kgrag.llm.ledger import Ledger
from kgrag.llm.limiter import PriorityLimiter
from kgrag.llm.openai import OpenAIChatProvider
from kgrag.llm.retry import RetryPolicy
from kgrag.llm.service import ChatService
from tests.support.paced_chat import ANSWER, Pace, PacedChat

QUICK_RETRY = RetryPolicy(max_retries=6, base=0.05, cap=0.2)
A = [{"role": "user", "content": "Who wrote the notes?"}]
B = [{"role": "user", "content": "Who designed the engine?"}]


def _service(
    base_url: str, *, timeout: float = 30.0, retry: RetryPolicy = QUICK_RETRY
) -> ChatService:
    provider = OpenAIChatProvider("paced", base_url=base_url, api_key="sk-test", timeout=timeout)
    return ChatService(
        provider,
        cache=LLMCache(MemoryKV()),
        limiter=PriorityLimiter(4),
        ledger=Ledger(),
        retry=retry,
        timeout=timeout,
    )


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def _cached_row(svc: ChatService, messages: list[dict[str, str]]) -> dict | None:
    assert svc.cache is not None
    key = cache_key(svc.identity, svc._request(messages, "answer", False, None))
    return await svc.cache.kv.get(key)


async def test_a_slow_answer_outlives_the_bound_and_is_cached_like_a_chat_answer():
    with PacedChat(Pace(first=0.05, total=3.0)) as server:
        svc = _service(server.base_url)
        view = svc.bounded(1.0)
        started = time.perf_counter()
        reply = await view.chat(A, tag="chunk-1")
        elapsed = time.perf_counter() - started
        again = await svc.bounded(1.0).chat(A)
        await svc.aclose()
    assert elapsed >= 2.9 and reply.text == ANSWER and not reply.cached
    assert (reply.prompt_tokens, reply.completion_tokens, reply.finish_reason) == (321, 45, "stop")
    assert view.failure is None and server.streamed() == [True]  # asked for as a stream, once
    cost = svc.ledger.snapshot()["answer"]
    assert (cost["calls"], cost["errors"], cost["prompt_tokens"], cost["cache_hits"]) == (
        1,
        0,
        321,
        1,
    )
    row = await _cached_row(svc, A)
    assert row is not None and row["text"] == ANSWER and row["tag"] == "chunk-1"
    assert again.cached and again.text == ANSWER


async def test_once_the_model_answered_later_calls_are_ordinary_calls():
    with PacedChat(Pace(first=0.05, total=0.3)) as server:
        svc = _service(server.base_url)
        view = svc.bounded(1.0)
        await view.chat(A)
        server.pace.total = 2.0  # longer than the bound: an ordinary call may take it
        reply = await view.chat(B)
        await svc.aclose()
    assert reply.text == ANSWER and view.failure is None
    assert server.streamed() == [True, False]


async def test_cache_hits_do_not_count_as_reaching_the_model():
    with PacedChat(Pace(first=0.05, total=0.2)) as server:
        svc = _service(server.base_url)
        await svc.chat(A)  # unbounded: an ordinary call fills the cache
        view = svc.bounded(1.0)
        hit = await view.chat(A)
        await view.chat(B)
        await svc.aclose()
    assert hit.cached
    assert server.streamed() == [False, True]  # B still had to reach the model


async def test_no_first_piece_gives_up_after_the_bound_and_later_calls_fail_at_once():
    with PacedChat(Pace(first=None)) as server:
        svc = _service(server.base_url)
        view = svc.bounded(1.0)
        started = time.perf_counter()
        with pytest.raises(ModelTimeoutError, match="did not answer within 1 s"):
            await view.chat(A)
        elapsed = time.perf_counter() - started
        with pytest.raises(ModelError):
            await view.chat(B)
        await svc.aclose()
    assert 0.9 < elapsed < 1.6, elapsed
    assert len(server.requests) == 1 and view.failure and "within 1 s" in view.failure
    assert await _cached_row(svc, A) is None


async def test_a_5xx_storm_is_retried_within_the_bound_in_total():
    with PacedChat(Pace(status=500)) as server:
        svc = _service(server.base_url, retry=RetryPolicy())  # 6 retries: 15 s and more
        started = time.perf_counter()
        with pytest.raises(ModelTimeoutError, match="within 1 s"):
            await svc.bounded(1.0).chat(A)
        elapsed = time.perf_counter() - started
        await svc.aclose()
    assert 0.9 < elapsed < 1.6, elapsed
    assert len(server.requests) >= 2  # retried, all inside the bound


async def test_a_dead_port_fails_within_the_bound():
    svc = _service(f"http://127.0.0.1:{_closed_port()}/v1")
    started = time.perf_counter()
    with pytest.raises(ModelError):
        await svc.bounded(1.0).chat(A)
    elapsed = time.perf_counter() - started
    await svc.aclose()
    assert elapsed < 1.6, elapsed


async def test_the_rest_of_the_answer_must_end_within_the_call_timeout():
    with PacedChat(Pace(first=0.05, total=3.0)) as server:
        svc = _service(server.base_url, timeout=1.0)
        view = svc.bounded(0.5)
        with pytest.raises(ModelTimeoutError, match=r"did not end within 1\.0 s"):
            await view.chat(A)
        await svc.aclose()
    assert view.failure and "did not end" in view.failure
    assert svc.ledger.snapshot()["answer"]["errors"] == 1
    assert await _cached_row(svc, A) is None
    assert svc.limiter.in_use == 0


async def test_identical_concurrent_queries_share_one_slow_answer():
    with PacedChat(Pace(first=0.05, total=2.0)) as server:
        svc = _service(server.base_url)
        first, second = svc.bounded(1.0), svc.bounded(1.0)
        replies = await asyncio.gather(first.chat(A), second.chat(A))
        await svc.aclose()
    assert [r.text for r in replies] == [ANSWER, ANSWER]
    assert sorted(r.cached for r in replies) == [False, True]
    assert len(server.requests) == 1 and first.failure is None and second.failure is None


@pytest.mark.parametrize("case", ["truncated", "rejected"])
async def test_truncated_or_rejected_streamed_answers_are_not_cached(case):
    pace = Pace(first=0.05, total=0.1, finish="length" if case == "truncated" else "stop")
    with PacedChat(pace) as server:
        svc = _service(server.base_url)
        accept = (lambda r: False) if case == "rejected" else None
        reply = await svc.bounded(1.0).chat(A, accept=accept)
        await svc.bounded(1.0).chat(A, accept=accept)
        await svc.aclose()
    assert reply.text == ANSWER and reply.finish_reason == pace.finish
    assert await _cached_row(svc, A) is None and len(server.requests) == 2


class _ChatOnly:
    """A provider that cannot stream: the bound covers its whole call."""

    identity = "chat-only:model@here"

    def __init__(self, delay: float):
        self.delay = delay

    async def chat(self, request: ChatRequest) -> ChatResult:
        await asyncio.sleep(self.delay)
        return ChatResult(text="whole", finish_reason="stop")

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize(("delay", "answers"), [(0.05, True), (2.0, False)])
async def test_a_provider_without_streams_is_bounded_as_a_whole(delay, answers):
    svc = ChatService(
        _ChatOnly(delay),  # type: ignore[arg-type]  # no stream(): what this test is about
        cache=LLMCache(MemoryKV()),
        limiter=PriorityLimiter(4),
        ledger=Ledger(),
    )
    view = svc.bounded(0.5)
    if answers:
        assert (await view.chat(A)).text == "whole"
        assert (await _cached_row(svc, A)) is not None
    else:
        with pytest.raises(ModelTimeoutError, match=r"within 0\.5 s"):
            await view.chat(A)
