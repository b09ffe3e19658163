"""The OpenAI provider and the whole stack over real HTTP, against the fake server."""

from __future__ import annotations

import asyncio
import json

import httpx
import numpy as np
import pytest

from kgrag.config.settings import Settings
from kgrag.errors import ModelRateLimitError
from kgrag.llm import _http
from kgrag.llm.cache import MemoryKV
from kgrag.llm.embedding import EmbeddingService
from kgrag.llm.factory import build_models
from kgrag.llm.ledger import Ledger
from kgrag.llm.limiter import PriorityLimiter
from kgrag.llm.openai import OpenAIChatProvider, OpenAIEmbeddingProvider
from kgrag.llm.retry import RetryPolicy
from kgrag.llm.service import ChatService
from tests.synth import run_synth, synth_reset, synth_stats

EXTRACT = [
    {
        "role": "system",
        "content": "Extract entities and relations. Output rows like "
        "entity<|#|>name<|#|>type<|#|>description, then <|COMPLETE|>.",
    },
    {
        "role": "user",
        "content": "---Input Text---\n```\nAda Lovelace worked with Charles "
        "Babbage in London on the Analytical Engine.\n```",
    },
]
FAST = RetryPolicy(max_retries=8, base=0.01, cap=0.05)


@pytest.fixture(scope="module")
def synth_url():
    with run_synth() as url:
        yield url


def _chat(url: str, limit: int = 4, retry: RetryPolicy = FAST, **kw) -> ChatService:
    return ChatService(
        OpenAIChatProvider("gpt-4o-mini", base_url=url, api_key="dummy"),
        cache=kw.pop("cache", None),
        limiter=PriorityLimiter(limit),
        ledger=Ledger(),
        retry=retry,
        **kw,
    )


async def test_chat_extraction_and_usage(synth_url: str) -> None:
    service = _chat(synth_url)
    try:
        result = await service.chat(EXTRACT, role="extract")
    finally:
        await service.aclose()
    assert result.text.rstrip().endswith("<|COMPLETE|>") and "entity<|#|>" in result.text
    assert result.finish_reason == "stop"
    expected_prompt = sum(len(m["content"]) // 4 for m in EXTRACT)
    assert (result.prompt_tokens, result.completion_tokens) == (
        expected_prompt,
        len(result.text) // 4,
    )
    snap = service.ledger.snapshot()["extract"]
    assert (snap["calls"], snap["prompt_tokens"]) == (1, expected_prompt)


async def test_json_mode(synth_url: str) -> None:
    service = _chat(synth_url)
    try:
        result = await service.chat(EXTRACT, role="extract", json_mode=True)
    finally:
        await service.aclose()
    data = json.loads(result.text)
    assert data["entities"] and {"name", "type", "description"} <= set(data["entities"][0])


async def test_streaming_matches_the_plain_answer(synth_url: str) -> None:
    service = _chat(synth_url)
    messages = [
        {"role": "user", "content": "Based on the context, answer the question: who is Ada?"}
    ]
    try:
        plain = await service.chat(messages)
        before = synth_stats(synth_url)["stream_calls"]
        pieces = [p async for p in service.stream(messages)]
    finally:
        await service.aclose()
    assert len(pieces) > 1 and "".join(pieces) == plain.text
    assert synth_stats(synth_url)["stream_calls"] == before + 1
    snap = service.ledger.snapshot()["answer"]
    assert snap["calls"] == 2 and snap["completion_tokens"] == 2 * plain.completion_tokens
    assert service.limiter.in_use == 0


async def test_embeddings_base64_match_the_float_answer(synth_url: str) -> None:
    texts = ["the harbor council met", "", "Ada Lovelace " * 50]
    provider = OpenAIEmbeddingProvider("text-embedding-3-small", base_url=synth_url, api_key="d")
    service = EmbeddingService(provider, batch_size=2)
    try:
        out = await service.embed(texts)
    finally:
        await service.aclose()
    async with httpx.AsyncClient() as client:
        body = (
            await client.post(
                f"{synth_url}/embeddings", json={"model": "m", "input": [t or " " for t in texts]}
            )
        ).json()
    floats = np.array([d["embedding"] for d in body["data"]], dtype=np.float32)
    assert out.shape == (3, 384) and service.dim == 384
    assert np.allclose(out, floats, atol=1e-6)


async def test_one_client_and_one_connection_reused(synth_url: str, monkeypatch) -> None:
    built: list[httpx.AsyncClient] = []
    real = httpx.AsyncClient

    def counting(*args, **kwargs):
        client = real(*args, **kwargs)
        built.append(client)
        return client

    monkeypatch.setattr(_http.httpx, "AsyncClient", counting)
    service = _chat(synth_url, limit=1)
    try:
        for i in range(10):
            await service.chat([{"role": "user", "content": f"Answer the question {i}"}])
            async for _ in service.stream([{"role": "user", "content": f"Answer {i}, streamed"}]):
                pass
        pool = service.provider._client._transport._pool
        assert len(pool.connections) == 1
    finally:
        await service.aclose()
    assert len(built) == 1


async def test_server_errors_are_retried_until_success() -> None:
    with run_synth("--error-rate", "0.3") as url:
        service = _chat(url, limit=8)
        try:
            results = await asyncio.gather(
                *(
                    service.chat([{"role": "user", "content": f"Answer the question {i}"}])
                    for i in range(20)
                )
            )
        finally:
            await service.aclose()
        stats = synth_stats(url)
    assert all(r.text for r in results)
    assert stats["errors_500"] > 0
    assert service.ledger.totals()["errors"] == stats["errors_500"]


async def test_rate_limited_server_is_served_through_retries() -> None:
    with run_synth("--max-concurrency", "2", "--latency", "0.1") as url:
        service = _chat(url, limit=8, retry=RetryPolicy(max_retries=10, base=0.05, cap=0.5))
        try:
            results = await asyncio.gather(
                *(
                    service.chat([{"role": "user", "content": f"Answer the question {i}"}])
                    for i in range(8)
                )
            )
        finally:
            await service.aclose()
        stats = synth_stats(url)
    assert len(results) == 8 and all(r.text for r in results)
    assert stats["rejected_429"] > 0 and stats["max_in_flight_chat"] <= 2
    assert stats["chat_calls"] == 8


async def test_exhausted_rate_limit_raises() -> None:
    with run_synth("--max-concurrency", "1", "--latency", "0.5") as url:
        service = _chat(url, limit=2, retry=RetryPolicy(max_retries=1, base=0.01, cap=0.01))
        try:
            outcomes = await asyncio.gather(
                *(
                    service.chat([{"role": "user", "content": f"Answer the question {i}"}])
                    for i in range(2)
                ),
                return_exceptions=True,
            )
        finally:
            await service.aclose()
    assert any(isinstance(o, ModelRateLimitError) for o in outcomes)


async def test_build_models_against_synth(synth_url: str) -> None:
    synth_reset(synth_url)
    settings = Settings(
        llm_base_url=synth_url, embedding_base_url=synth_url, llm_api_key="d", embedding_api_key="d"
    )
    models = build_models(settings, MemoryKV())
    try:
        first = await models.chat.chat(EXTRACT, role="extract")
        second = await models.chat.chat(EXTRACT, role="extract")
        vectors = await models.embed.embed(["a", "b"], kind="query")
    finally:
        await models.aclose()
    assert second.cached and second.text == first.text
    stats = synth_stats(synth_url)
    assert stats["chat_calls"] == 1 and stats["embedding_requests"] == 1
    assert vectors.shape == (2, 384)
    snap = models.ledger.snapshot()
    assert snap["extract"]["cache_hits"] == 1 and snap["embed"]["calls"] == 1
