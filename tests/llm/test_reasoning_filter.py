"""One reasoning filter for every model reply: answers, streams, extraction, keywords.

A ``<think>`` block anywhere in a reply, and any part of one split across
stream pieces, never reaches a caller.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from kgrag import KGRag
from kgrag.llm.base import ChatRequest, ChatResult
from kgrag.llm.cache import LLMCache, MemoryKV, cache_key
from kgrag.llm.fake import FakeChatProvider
from kgrag.llm.ledger import Ledger
from kgrag.llm.limiter import PriorityLimiter
from kgrag.llm.reasoning import ReasoningFilter, strip_reasoning
from kgrag.llm.service import ChatService
from tests.support.chat import ScriptedChat
from tests.support.settings import fake_settings

SECRET = "SECRET-DRAFT"
BLOCK = f"<think>{SECRET} maybe the answer is no</think>"
ANSWER = f"Paris is the capital {BLOCK}of France."
CLEAN = "Paris is the capital of France."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>a</think>b", "b"),
        ("draft</think>answer", "answer"),
        ("x<think>a</think>y<THINK>b</think>z", "xyz"),
        ("answer<think>still going", "answer"),
        ("<think>a<think>b</think>c</think>d", "d"),
        ("  <think>hmm</think>\n\n Final.", "Final."),
        ("< Thinking >x</ thinking >y", "y"),
        (ANSWER, CLEAN),
        ("a < b, and x<t", "a < b, and x<t"),  # a '<' that is no tag stays
        ("   ", "   "),
    ],
)
def test_strip_reasoning(text, expected):
    assert strip_reasoning(text) == expected


def _streamed(text: str, size: int) -> list[str]:
    reply = ReasoningFilter()
    out = [reply.feed(text[i : i + size]) for i in range(0, len(text), size)]
    return [*out, reply.end()]


@pytest.mark.parametrize(
    "text", [ANSWER, f"{BLOCK}\n\n{CLEAN}", f"{CLEAN}<thinking>{SECRET}", "a < b <t"]
)
def test_a_stream_split_anywhere_gives_what_the_whole_reply_gives(text):
    for size in range(1, len(text) + 1):
        pieces = _streamed(text, size)
        assert "".join(pieces) == strip_reasoning(text), size
        assert not any(SECRET in p or "think" in p for p in pieces), size


def _service(provider) -> ChatService:
    return ChatService(
        provider, cache=LLMCache(MemoryKV()), limiter=PriorityLimiter(2), ledger=Ledger()
    )


async def test_the_chat_service_filters_answers_and_streams():
    service = _service(ScriptedChat(ANSWER, ANSWER, ANSWER, pieces=3))  # tags split over pieces
    messages = [{"role": "user", "content": "capital?"}]
    assert (await service.chat(messages)).text == CLEAN
    assert (await service.chat(messages)).text == CLEAN  # the cached answer
    pieces = [piece async for piece in service.stream(messages)]
    assert "".join(pieces) == CLEAN and not any("<" in p or SECRET in p for p in pieces)
    bounded = service.bounded(5.0)  # a chat asked for as a stream and joined
    result = await bounded.chat([{"role": "user", "content": "again?"}])
    assert result.text == CLEAN


async def test_an_answer_cached_with_its_reasoning_is_served_without_it():
    kv, provider = MemoryKV(), ScriptedChat()
    service = ChatService(provider, cache=LLMCache(kv), limiter=PriorityLimiter(2), ledger=Ledger())
    messages = [{"role": "user", "content": "capital?"}]
    key = cache_key(service.identity, service._request(messages, "answer", False, None))
    await LLMCache(kv).put(key, ChatResult(text=ANSWER), "answer")  # an older version kept it
    result = await service.chat(messages)
    assert result.cached and result.text == CLEAN and provider.calls == []


class Thinking(FakeChatProvider):
    """The fake model, with a reasoning block in the middle of every reply, streamed in threes."""

    async def chat(self, request: ChatRequest) -> ChatResult:
        result = await super().chat(request)
        half = len(result.text) // 2
        result.text = f"{result.text[:half]}{BLOCK}{result.text[half:]}"
        return result

    async def stream(
        self, request: ChatRequest, usage: ChatResult | None = None
    ) -> AsyncIterator[str]:
        text = (await self.chat(request)).text
        for i in range(0, len(text), 3):
            yield text[i : i + 3]


TEXT = "Ada Lovelace wrote notes on the Analytical Engine of Charles Babbage."


async def test_no_reasoning_reaches_the_user_or_the_index(tmp_path):
    async with KGRag(fake_settings(tmp_path), chat=Thinking()) as rag:
        await rag.insert([TEXT])
        answer = await rag.query("Who wrote notes on the Analytical Engine?", mode="mix")
        stream = rag.stream("Who designed the Analytical Engine?", mode="mix")
        pieces = [piece async for piece in stream]
        graph = rag.storage.graph
        names = await graph.all_node_names()
        nodes = [await graph.get_node(n) for n in names]
    assert "Ada Lovelace" in names and not answer.extractive
    assert answer.answer and SECRET not in answer.answer and "think" not in answer.answer
    assert "".join(pieces).strip() and not any(SECRET in p or "think" in p for p in pieces)
    assert SECRET not in str(nodes) and not any(SECRET in n for n in names)
