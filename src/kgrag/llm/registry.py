"""Registries of chat, embedding and rerank providers, imported lazily.

Every registered provider class has a ``from_settings(settings)`` class
method building it from :class:`kgrag.config.settings.Settings`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from kgrag.config.registry import Registry
from kgrag.llm.base import ChatProvider, EmbeddingProvider, RerankProvider

if TYPE_CHECKING:
    from kgrag.config.settings import Settings

CHAT_PROVIDERS: Registry[type[ChatProvider]] = Registry("chat provider")
CHAT_PROVIDERS.register("openai", "kgrag.llm.openai:OpenAIChatProvider")
CHAT_PROVIDERS.register("ollama", "kgrag.llm.ollama:OllamaChatProvider")
CHAT_PROVIDERS.register("fake", "kgrag.llm.fake:FakeChatProvider")

EMBEDDING_PROVIDERS: Registry[type[EmbeddingProvider]] = Registry("embedding provider")
EMBEDDING_PROVIDERS.register("openai", "kgrag.llm.openai:OpenAIEmbeddingProvider")
EMBEDDING_PROVIDERS.register("ollama", "kgrag.llm.ollama:OllamaEmbeddingProvider")
EMBEDDING_PROVIDERS.register("fake", "kgrag.llm.fake:FakeEmbeddingProvider")
EMBEDDING_PROVIDERS.register("local", "kgrag.llm.local:LocalEmbedder")

RERANK_PROVIDERS: Registry[type[RerankProvider]] = Registry("rerank provider")
RERANK_PROVIDERS.register("cohere", "kgrag.llm.rerank:HTTPRerankProvider")
RERANK_PROVIDERS.register("jina", "kgrag.llm.rerank:HTTPRerankProvider")
RERANK_PROVIDERS.register("fake", "kgrag.llm.fake:FakeRerankProvider")


_P = TypeVar("_P")


def _build(registry: Registry[type[_P]], name: str, settings: Settings) -> _P:
    cls: type[_P] = registry.get(name)
    factory: Callable[[Settings], _P] | None = getattr(cls, "from_settings", None)
    return factory(settings) if factory is not None else cls()


def build_chat_provider(settings: Settings) -> ChatProvider:
    """The chat provider ``settings`` name (after resolving 'auto')."""
    return _build(CHAT_PROVIDERS, settings.resolved_llm_provider(), settings)


def build_embedding_provider(settings: Settings) -> EmbeddingProvider:
    """The embedding provider ``settings`` name (after resolving 'auto')."""
    return _build(EMBEDDING_PROVIDERS, settings.resolved_embedding_provider(), settings)


def build_rerank_provider(settings: Settings) -> RerankProvider | None:
    """The configured reranker, or None when ``rerank_provider`` is unset."""
    if not settings.rerank.provider:
        return None
    return _build(RERANK_PROVIDERS, settings.rerank.provider, settings)
