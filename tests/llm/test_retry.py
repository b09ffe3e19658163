"""Retry with backoff: what is retried, how long it waits, what it raises."""

from __future__ import annotations

import asyncio
import time

import pytest

from kgrag.errors import ModelRateLimitError, ModelRequestError, ModelServerError, ModelTimeoutError
from kgrag.llm.ledger import Ledger
from kgrag.llm.limiter import PriorityLimiter
from kgrag.llm.retry import RetryPolicy
from kgrag.llm.service import ChatService
from tests.support.chat import ScriptedChat, msgs

FAST = RetryPolicy(max_retries=3, base=0.01, cap=0.02)


def _rate_limited(after: float | None) -> ModelRateLimitError:
    exc = ModelRateLimitError("429")
    exc.retry_after = after  # type: ignore[attr-defined]
    return exc


def _service(
    provider: ScriptedChat, retry: RetryPolicy = FAST, limit: int = 4, **kw
) -> ChatService:
    return ChatService(
        provider, cache=None, limiter=PriorityLimiter(limit), ledger=Ledger(), retry=retry, **kw
    )


def test_delay_honours_retry_after_with_small_jitter() -> None:
    policy = RetryPolicy(base=5.0, cap=30.0)
    for attempt in range(5):
        assert 0.25 <= policy.delay(attempt, 0.25) <= 0.275 + 1e-9


def test_delay_backs_off_exponentially_up_to_the_cap() -> None:
    policy = RetryPolicy(base=0.5, cap=30.0)
    assert 0.25 <= policy.delay(0) <= 0.5
    assert 2.0 <= policy.delay(3) <= 4.0
    assert 15.0 <= policy.delay(20) <= 30.0


async def test_retry_after_is_waited_not_the_backoff() -> None:
    provider = ScriptedChat(_rate_limited(0.2), "ok")
    service = _service(provider, RetryPolicy(max_retries=2, base=10.0, cap=10.0))
    start = time.perf_counter()
    result = await service.chat(msgs("q"))
    elapsed = time.perf_counter() - start
    assert result.text == "ok" and len(provider.calls) == 2
    assert 0.2 <= elapsed < 1.0


async def test_server_errors_and_timeouts_are_retried() -> None:
    provider = ScriptedChat(ModelServerError("500"), ModelTimeoutError("slow"), "ok")
    result = await _service(provider).chat(msgs("q"))
    assert result.text == "ok" and len(provider.calls) == 3


async def test_client_errors_are_not_retried() -> None:
    provider = ScriptedChat(ModelRequestError("400 bad"), "never")
    service = _service(provider)
    with pytest.raises(ModelRequestError):
        await service.chat(msgs("q"))
    assert len(provider.calls) == 1


@pytest.mark.parametrize("error", [ModelRateLimitError, ModelServerError, ModelTimeoutError])
async def test_exhausted_retries_raise_the_matching_error(error: type) -> None:
    provider = ScriptedChat(*[error("boom") for _ in range(10)])
    service = _service(provider)
    with pytest.raises(error, match="gave up after 3 retries"):
        await service.chat(msgs("q"), role="extract")
    assert len(provider.calls) == 4
    snap = service.ledger.snapshot()["extract"]
    assert (snap["calls"], snap["errors"]) == (4, 4)


async def test_slow_provider_times_out_and_is_retried() -> None:
    provider = ScriptedChat(delay=0.3)
    service = _service(provider, RetryPolicy(max_retries=1, base=0.01, cap=0.01), timeout=0.05)
    with pytest.raises(ModelTimeoutError, match="gave up"):
        await service.chat(msgs("q"))
    assert service.limiter.in_use == 0


async def test_backoff_sleep_does_not_hold_a_slot() -> None:
    # One slot. A fails with Retry-After 0.3 s; B, started after A, must not
    # wait for A's backoff to end.
    provider = ScriptedChat(_rate_limited(0.3), "b", "a")
    service = _service(provider, RetryPolicy(max_retries=2), limit=1)
    done: dict[str, float] = {}
    start = time.perf_counter()

    async def run(name: str, text: str, wait: float) -> None:
        await asyncio.sleep(wait)
        await service.chat(msgs(text))
        done[name] = time.perf_counter() - start

    await asyncio.gather(run("A", "a", 0.0), run("B", "b", 0.05))
    assert done["B"] < 0.2 <= done["A"]
