"""Cache keying and the cache layer of ChatService."""

from __future__ import annotations

import asyncio

from kgrag.llm.base import ChatRequest
from kgrag.llm.cache import LLMCache, MemoryKV, cache_key
from kgrag.llm.ledger import Ledger
from kgrag.llm.limiter import PriorityLimiter
from kgrag.llm.service import ChatService
from tests.support.chat import ScriptedChat, msgs


def _service(provider: ScriptedChat, kv: MemoryKV | None = None, **kw) -> ChatService:
    return ChatService(
        provider,
        cache=LLMCache(kv or MemoryKV()),
        limiter=PriorityLimiter(4),
        ledger=Ledger(),
        **kw,
    )


def test_same_request_same_key() -> None:
    a = ChatRequest(messages=msgs("hello"), role="answer", temperature=0.0)
    b = ChatRequest(messages=msgs("hello"), role="answer", temperature=0.0)
    assert cache_key("openai:m@h", a) == cache_key("openai:m@h", b)


def test_every_input_changes_the_key() -> None:
    base = dict(
        messages=msgs("hello"), role="answer", json_mode=False, max_tokens=None, temperature=0.0
    )
    ref = cache_key("openai:m@h", ChatRequest(**base))
    variants = [
        ("openai:other@h", {}),
        ("openai:m@other", {}),
        ("openai:m@h", {"role": "summary"}),
        ("openai:m@h", {"json_mode": True}),
        ("openai:m@h", {"temperature": 0.7}),
        ("openai:m@h", {"max_tokens": 100}),
        ("openai:m@h", {"messages": msgs("hello!")}),
        ("openai:m@h", {"messages": [{"role": "system", "content": "hello"}]}),
        ("openai:m@h", {"extra": {"seed": 1}}),
    ]
    keys = {cache_key(ident, ChatRequest(**{**base, **change})) for ident, change in variants}
    assert ref not in keys
    assert len(keys) == len(variants)


def test_length_prefix_prevents_concatenation_collisions() -> None:
    one = ChatRequest(
        messages=[{"role": "user", "content": "ab"}, {"role": "user", "content": "c"}]
    )
    two = ChatRequest(
        messages=[{"role": "user", "content": "a"}, {"role": "user", "content": "bc"}]
    )
    assert cache_key("x", one) != cache_key("x", two)


async def test_hit_costs_no_call_and_is_marked_cached() -> None:
    provider = ScriptedChat("first answer")
    kv = MemoryKV()
    service = _service(provider, kv)
    first = await service.chat(msgs("q"), role="keywords")
    second = await service.chat(msgs("q"), role="keywords")
    assert (first.cached, second.cached) == (False, True)
    assert second.text == "first answer" and second.completion_tokens == first.completion_tokens
    assert len(provider.calls) == 1
    row = next(iter(kv.data.values()))
    assert row == {
        "text": "first answer",
        "prompt_tokens": 10,
        "completion_tokens": 12,
        "role": "keywords",
    }
    snap = service.ledger.snapshot()["keywords"]
    assert (snap["calls"], snap["cache_hits"]) == (1, 1)


async def test_different_identity_misses() -> None:
    kv = MemoryKV()
    await _service(ScriptedChat("a", identity="openai:m1@h"), kv).chat(msgs("q"))
    other = ScriptedChat("b", identity="openai:m2@h")
    result = await _service(other, kv).chat(msgs("q"))
    assert (result.text, result.cached, len(other.calls)) == ("b", False, 1)


async def test_different_params_miss() -> None:
    provider = ScriptedChat("a", "b", "c")
    service = _service(provider)
    await service.chat(msgs("q"))
    await service.chat(msgs("q"), json_mode=True)
    await service.chat(msgs("q"), max_tokens=50)
    assert len(provider.calls) == 3


async def test_truncated_answers_are_not_cached() -> None:
    provider = ScriptedChat("cut", "cut again", finish_reason="length")
    kv = MemoryKV()
    service = _service(provider, kv)
    await service.chat(msgs("q"))
    again = await service.chat(msgs("q"))
    assert not again.cached and len(provider.calls) == 2 and not kv.data


async def test_use_cache_false_bypasses() -> None:
    provider = ScriptedChat()
    service = _service(provider)
    await service.chat(msgs("q"))
    await service.chat(msgs("q"), use_cache=False)
    assert len(provider.calls) == 2


async def test_identical_concurrent_calls_share_one_request() -> None:
    provider = ScriptedChat("shared", delay=0.05)
    service = _service(provider)
    results = await asyncio.gather(*(service.chat(msgs("q")) for _ in range(5)))
    assert len(provider.calls) == 1
    assert {r.text for r in results} == {"shared"}
    assert sum(r.cached for r in results) == 4


def _good(result) -> bool:
    return result.text.startswith("good")


async def test_rejected_answer_is_returned_but_not_cached() -> None:
    provider = ScriptedChat("bad", "good")
    kv = MemoryKV()
    service = _service(provider, kv)
    first = await service.chat(msgs("q"), role="extract", accept=_good)
    assert (first.text, first.cached) == ("bad", False) and not kv.data
    second = await service.chat(msgs("q"), role="extract", accept=_good)
    third = await service.chat(msgs("q"), role="extract", accept=_good)
    assert (second.text, second.cached, third.text, third.cached) == ("good", False, "good", True)
    assert [row["text"] for row in kv.data.values()] == ["good"]
    snap = service.ledger.snapshot()["extract"]
    assert (snap["calls"], snap["cache_hits"]) == (2, 1)


async def test_cached_answer_the_judge_rejects_is_a_miss_and_is_replaced() -> None:
    provider = ScriptedChat("bad from an old run", "good")
    kv = MemoryKV()
    service = _service(provider, kv)
    await service.chat(msgs("q"), role="extract")  # no judge: cached as it is
    again = await service.chat(msgs("q"), role="extract", accept=_good)
    assert (again.text, again.cached, len(provider.calls)) == ("good", False, 2)
    assert [row["text"] for row in kv.data.values()] == ["good"]
    snap = service.ledger.snapshot()["extract"]
    assert (snap["calls"], snap["cache_hits"]) == (2, 0)  # the rejected hit is no hit


async def test_rejected_cache_entry_is_dropped_even_when_the_fresh_answer_is_bad() -> None:
    provider = ScriptedChat("bad", "bad again")
    kv = MemoryKV()
    service = _service(provider, kv)
    await service.chat(msgs("q"), role="extract")
    result = await service.chat(msgs("q"), role="extract", accept=_good)
    assert result.text == "bad again" and not kv.data


async def test_judge_is_not_consulted_without_a_cache() -> None:
    def never(result) -> bool:
        raise AssertionError("called")

    service = ChatService(
        ScriptedChat("x"), cache=None, limiter=PriorityLimiter(4), ledger=Ledger()
    )
    assert (await service.chat(msgs("q"), accept=never)).text == "x"


async def test_concurrent_identical_calls_share_an_accepted_answer() -> None:
    provider = ScriptedChat("good", delay=0.05)
    kv = MemoryKV()
    service = _service(provider, kv)
    results = await asyncio.gather(*(service.chat(msgs("q"), accept=_good) for _ in range(4)))
    assert len(provider.calls) == 1 and {r.text for r in results} == {"good"}
    assert sum(r.cached for r in results) == 3 and len(kv.data) == 1
    snap = service.ledger.snapshot()["answer"]
    assert (snap["calls"], snap["cache_hits"]) == (1, 3)


async def test_a_rejected_answer_is_not_shared_and_followers_ask_themselves() -> None:
    provider = ScriptedChat("bad", "good", "good", delay=0.05)
    kv = MemoryKV()
    service = _service(provider, kv)
    results = await asyncio.gather(*(service.chat(msgs("q"), accept=_good) for _ in range(3)))
    assert [r.text for r in results] == ["bad", "good", "good"]
    assert len(provider.calls) == 3 and not any(r.cached for r in results)
    assert [row["text"] for row in kv.data.values()] == ["good"]
    snap = service.ledger.snapshot()["answer"]
    assert (snap["calls"], snap["cache_hits"]) == (3, 0)


async def test_a_follower_applies_its_own_judge_to_the_shared_answer() -> None:
    provider = ScriptedChat("bad", "good", delay=0.05)
    service = _service(provider)
    plain, judged = await asyncio.gather(
        service.chat(msgs("q")), service.chat(msgs("q"), accept=_good)
    )
    assert (plain.text, judged.text, judged.cached) == ("bad", "good", False)
    assert len(provider.calls) == 2
