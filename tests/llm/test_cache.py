"""Cache keying and the cache layer of ChatService."""

from __future__ import annotations

import asyncio

from kgrag.llm.base import ChatRequest
from kgrag.llm.cache import LLMCache, MemoryKV, cache_key
from kgrag.llm.ledger import Ledger
from kgrag.llm.limiter import PriorityLimiter
from kgrag.llm.service import ChatService

from .stubs import ScriptedChat, msgs


def _service(provider: ScriptedChat, kv: MemoryKV | None = None, **kw) -> ChatService:
    return ChatService(provider, cache=LLMCache(kv or MemoryKV()), limiter=PriorityLimiter(4),
                       ledger=Ledger(), **kw)


def test_same_request_same_key() -> None:
    a = ChatRequest(messages=msgs("hello"), role="answer", temperature=0.0)
    b = ChatRequest(messages=msgs("hello"), role="answer", temperature=0.0)
    assert cache_key("openai:m@h", a) == cache_key("openai:m@h", b)


def test_every_input_changes_the_key() -> None:
    base = dict(messages=msgs("hello"), role="answer", json_mode=False, max_tokens=None,
                temperature=0.0)
    ref = cache_key("openai:m@h", ChatRequest(**base))
    variants = [
        ("openai:other@h", {}), ("openai:m@other", {}),
        ("openai:m@h", {"role": "summary"}), ("openai:m@h", {"json_mode": True}),
        ("openai:m@h", {"temperature": 0.7}), ("openai:m@h", {"max_tokens": 100}),
        ("openai:m@h", {"messages": msgs("hello!")}),
        ("openai:m@h", {"messages": [{"role": "system", "content": "hello"}]}),
        ("openai:m@h", {"extra": {"seed": 1}}),
    ]
    keys = {cache_key(ident, ChatRequest(**{**base, **change})) for ident, change in variants}
    assert ref not in keys
    assert len(keys) == len(variants)


def test_length_prefix_prevents_concatenation_collisions() -> None:
    one = ChatRequest(messages=[{"role": "user", "content": "ab"}, {"role": "user", "content": "c"}])
    two = ChatRequest(messages=[{"role": "user", "content": "a"}, {"role": "user", "content": "bc"}])
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
    assert row == {"text": "first answer", "prompt_tokens": 10, "completion_tokens": 12,
                   "role": "keywords"}
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
