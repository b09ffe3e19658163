"""Bring your own models and store: providers and plain functions get kgrag's whole stack."""

from __future__ import annotations

import numpy as np
import pytest

from kgrag import ConfigError, KGRag, adapt_chat, adapt_embedding, adapt_rerank
from kgrag.llm.adapters import ChatFunction, EmbeddingFunction, RerankFunction
from kgrag.llm.base import ChatRequest, ChatResult
from kgrag.llm.fake import FakeChatProvider, fake_vector
from kgrag.storage.sqlite import DB_FILENAME, SQLiteStorage

from .helpers import ANSWER, QUESTION, TEXT, lightrag_llm, settings


async def test_lightrag_style_chat_function_extracts_answers_and_is_cached(tmp_path):
    log: list[dict] = []
    async with KGRag(settings(tmp_path / "idx"), chat=lightrag_llm(log)) as rag:
        identity = rag.models.chat.identity
        assert identity.startswith("func:") and identity.endswith(
            "helpers.lightrag_llm.<locals>.llm"
        )
        report = await rag.insert([TEXT])
        assert len(report.processed) == 1
        names = set(await rag.storage.graph.all_node_names())
        assert {"Ada Lovelace", "Analytical Engine", "Charles Babbage"} <= names
        extraction = next(c for c in log if "---Input Text---" in c["prompt"])
        assert TEXT in extraction["prompt"] and "<|#|>" in (extraction["system"] or "")

        first = await rag.query(QUESTION, mode="local")
        calls = len(log)
        again = await rag.query(QUESTION, mode="local")
        snap = rag.models.ledger.snapshot()
        cached = await rag.storage.kv("llm_cache").count()
    assert first.answer == ANSWER and not first.extractive
    assert again.cached and len(log) == calls  # the cache answered, the function was not called
    assert snap["extract"]["calls"] >= 1 and snap["answer"]["calls"] == 1
    assert snap["answer"]["cache_hits"] == 1 and snap["keywords"]["calls"] == 1
    assert cached >= 3  # extraction, keywords and answer


async def test_chat_provider_object_is_used_as_it_is(tmp_path):
    provider = FakeChatProvider(model="mine")
    async with KGRag(settings(tmp_path / "idx", llm_provider="none"), chat=provider) as rag:
        assert rag.models.chat.provider is provider
        assert rag.models.chat.cache is not None
        await rag.insert([TEXT])
        result = await rag.query(QUESTION, mode="local")
    assert result.answer.startswith("Based on the context") and not result.extractive


async def test_embedding_function_sync_list_of_lists(tmp_path):
    seen: list[list[str]] = []

    def embed(texts):  # synchronous, plain lists: runs in a worker thread
        seen.append(list(texts))
        return [fake_vector(t, 48).tolist() for t in texts]

    given = adapt_embedding(embed, name="mine:hashing-48")
    async with KGRag(settings(tmp_path / "idx"), embed=given) as rag:
        await rag.insert([TEXT])
        result = await rag.query(QUESTION, mode="naive", only_need_context=True)
        stored = await rag.storage.vectors("chunks").get_vectors(
            await rag.storage.vectors("chunks").ids()
        )
        snap = rag.models.ledger.snapshot()["embed"]
        identity = await rag.storage.get_meta("embedding_identity")
    assert seen and any(TEXT in batch for batch in seen)
    assert {v.shape for v in stored.values()} == {(48,)}
    assert "Ada Lovelace" in result.context
    assert snap["calls"] == len(seen) and identity == "mine:hashing-48"


async def test_embedding_function_async_ndarray_and_dimension_check():
    async def embed(texts):
        return np.ones((len(texts), 8), dtype=np.float64)

    fixed = EmbeddingFunction(embed, embedding_dim=8)
    assert (await fixed.embed(["a", "b"])).dtype == np.float32
    wrong = EmbeddingFunction(embed, embedding_dim=16)
    with pytest.raises(Exception, match="16-dimensional"):
        await wrong.embed(["a"])
    detected = EmbeddingFunction(embed)
    await detected.embed(["a"])
    assert detected.dim == 8


async def test_embedding_function_told_query_or_document():
    kinds: list[str] = []

    async def embed(texts, kind="document"):
        kinds.append(kind)
        return np.eye(len(texts), 4)

    provider = EmbeddingFunction(embed)
    await provider.embed(["q"], kind="query")
    await provider.embed(["d"])
    assert kinds == ["query", "document"]


async def test_rerank_function_dicts_reorder_the_chunks(tmp_path):
    calls: list[tuple[str, list[str], int | None]] = []

    async def rerank(query, documents, top_n=None):
        calls.append((query, list(documents), top_n))
        # Cohere shape, worst first: kgrag sorts.
        return [{"index": i, "relevance_score": float(i)} for i in range(len(documents))]

    async with KGRag(settings(tmp_path / "idx"), rerank=rerank) as rag:
        await rag.insert([TEXT, "The weather in Paris was mild that spring, with rain."])
        data = await rag.query_data(QUESTION, mode="naive", enable_rerank=True)
        snap = rag.models.ledger.snapshot()
    assert len(calls) == 1 and calls[0][0] == QUESTION
    last = calls[0][1][-1]
    assert data["chunks"][0]["content"] == last  # the highest score comes first
    assert snap["rerank"]["calls"] == 1


async def test_rerank_function_pairs_and_bad_answers():
    provider = adapt_rerank(lambda q, docs: [(0, 0.1), (1, 0.9)])
    assert isinstance(provider, RerankFunction)
    assert await provider.rerank("q", ["a", "b"], top_n=1) == [(1, 0.9)]
    broken = RerankFunction(lambda q, docs: [(5, 1.0)])
    with pytest.raises(Exception, match="out of range"):
        await broken.rerank("q", ["a"])


async def test_injected_storage_holds_the_data(tmp_path):
    store = SQLiteStorage(tmp_path / "elsewhere")
    async with KGRag(settings(tmp_path / "idx"), storage=store) as rag:
        assert rag.storage is store
        await rag.insert([TEXT])
    assert not (tmp_path / "idx" / DB_FILENAME).exists()
    check = SQLiteStorage(tmp_path / "elsewhere")
    await check.open()
    try:
        assert await check.graph.node_count() >= 3
        assert await check.kv("text_chunks").count() == 1
    finally:
        await check.close()


async def test_chat_function_gets_system_history_and_named_options():
    got: dict = {}

    def llm(prompt, system_prompt=None, history=None, role=None):  # sync, `history` spelling
        got.update(prompt=prompt, system=system_prompt, history=history, role=role)
        return "ok"

    provider = ChatFunction(llm, name="mine")
    request = ChatRequest(
        messages=[
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "who?"},
        ],
        role="keywords",
    )
    result = await provider.chat(request)
    assert result.text == "ok" and result.completion_tokens == 0 and provider.identity == "mine"
    assert got == {
        "prompt": "who?",
        "system": "be brief",
        "history": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        "role": "keywords",
    }
    pieces = [p async for p in provider.stream(request, usage=ChatResult(text=""))]
    assert pieces == ["ok"]


async def test_chat_function_without_parameters_gets_everything_in_the_prompt():
    async def llm(prompt):
        return prompt

    reply = await ChatFunction(llm).chat(
        ChatRequest(messages=[{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])
    )
    assert reply.text == "S\n\nU"


def test_adapters_refuse_what_is_neither_provider_nor_function(tmp_path):
    with pytest.raises(ConfigError, match="chat= needs"):
        adapt_chat(42)
    with pytest.raises(ConfigError, match="embed= needs"):
        KGRag(settings(tmp_path), embed="text-embedding-3-small")


async def test_non_text_reply_is_a_model_error():
    from kgrag.errors import ModelResponseError

    with pytest.raises(ModelResponseError, match="not str"):
        await ChatFunction(lambda prompt: 3).chat(
            ChatRequest(messages=[{"role": "user", "content": "x"}])
        )


async def test_function_errors_become_model_errors_timeouts_are_retried():
    from kgrag.errors import ModelError, ModelTimeoutError

    calls: list[int] = []

    async def broken(prompt):
        calls.append(1)
        raise RuntimeError("boom")

    with pytest.raises(ModelError, match="RuntimeError: boom"):
        await ChatFunction(broken).chat(ChatRequest(messages=[{"role": "user", "content": "x"}]))

    async def slow(texts):
        raise TimeoutError

    with pytest.raises(ModelTimeoutError):
        await EmbeddingFunction(slow).embed(["x"])


async def test_opening_and_status_build_no_embedder(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await rag.insert([TEXT])
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await rag.status()
        await rag.export()
        assert not rag.models.embed_built
        await rag.query(QUESTION, mode="naive", only_need_context=True)
        assert rag.models.embed_built
