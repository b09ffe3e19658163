"""Provider registries and the build_models factory."""

from __future__ import annotations

import pytest

from kgrag.config.settings import Settings
from kgrag.errors import UnknownBackendError
from kgrag.llm import MemoryKV, build_models
from kgrag.llm.fake import FakeChatProvider, FakeEmbeddingProvider
from kgrag.llm.openai import OpenAIChatProvider, OpenAIEmbeddingProvider
from kgrag.llm.registry import CHAT_PROVIDERS, EMBEDDING_PROVIDERS, RERANK_PROVIDERS


def test_known_names() -> None:
    assert {"openai", "ollama", "fake"} <= set(CHAT_PROVIDERS.names())
    assert {"openai", "ollama", "fake", "local"} <= set(EMBEDDING_PROVIDERS.names())
    assert {"cohere", "jina"} <= set(RERANK_PROVIDERS.names())


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(UnknownBackendError) as info:
        CHAT_PROVIDERS.get("gpt5-direct")
    message = str(info.value)
    assert "unknown chat provider 'gpt5-direct'" in message
    assert "fake, ollama, openai" in message


def test_unknown_provider_in_settings_fails_fast() -> None:
    settings = Settings(llm_provider="nope", embedding_provider="fake")
    with pytest.raises(UnknownBackendError, match="known chat providers"):
        build_models(settings, MemoryKV())


async def test_build_models_with_fake_providers() -> None:
    settings = Settings(llm_provider="fake", embedding_provider="fake", embedding_dim=32)
    models = build_models(settings, MemoryKV())
    try:
        assert isinstance(models.chat.provider, FakeChatProvider)
        assert isinstance(models.embed.provider, FakeEmbeddingProvider)
        assert models.rerank is None and models.chat.cache is not None
        assert (await models.embed.embed(["a b"])).shape == (1, 32)
        assert models.ledger.snapshot()["embed"]["calls"] == 1
    finally:
        await models.aclose()


async def test_auto_resolution_and_no_chat_model() -> None:
    settings = Settings(llm_provider="none", embedding_provider="fake", enable_llm_cache=False)
    models = build_models(settings, None)
    assert models.chat is None
    await models.aclose()
    configured = Settings(
        llm_provider="auto",
        embedding_provider="auto",
        llm_base_url="http://127.0.0.1:9/v1",
        llm_api_key="sk-secret",
        embedding_base_url="http://127.0.0.1:9/v1",
    )
    models = build_models(configured, MemoryKV())
    try:
        assert isinstance(models.chat.provider, OpenAIChatProvider)
        assert isinstance(models.embed.provider, OpenAIEmbeddingProvider)
        assert models.chat.identity == "openai:gpt-4o-mini@127.0.0.1:9"
        assert "secret" not in models.chat.identity
    finally:
        await models.aclose()


def test_services_share_limiters_only_when_given_the_same_limits() -> None:
    settings = Settings(llm_provider="fake", embedding_provider="fake", rerank_provider="fake")
    one, two = build_models(settings), build_models(settings)
    assert one.chat.limiter is not two.chat.limiter
    assert one.rerank.limiter is one.chat.limiter
    assert one.embed.limiter is not two.embed.limiter and one.embed.limiter is not one.chat.limiter
    three = build_models(settings, limits=one.limits)
    assert three.chat.limiter is one.chat.limiter and three.embed.limiter is one.embed.limiter
