"""Build every model service from :class:`kgrag.config.settings.Settings`, or around injected models."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kgrag.errors import UnknownBackendError
from kgrag.llm.adapters import (
    ChatModel,
    EmbeddingModel,
    RerankModel,
    adapt_chat,
    adapt_embedding,
    adapt_rerank,
)
from kgrag.llm.base import EmbeddingProvider
from kgrag.llm.cache import LLMCache
from kgrag.llm.embedding import EmbeddingService
from kgrag.llm.ledger import Ledger
from kgrag.llm.limiter import Limits
from kgrag.llm.registry import (
    EMBEDDING_PROVIDERS,
    build_chat_provider,
    build_embedding_provider,
    build_rerank_provider,
)
from kgrag.llm.retry import RetryPolicy
from kgrag.llm.service import ChatService, RerankService

if TYPE_CHECKING:
    from kgrag.config.settings import Settings
    from kgrag.storage.base import KVStore


class Models:
    """The services one kgrag instance uses, their limits and their shared ledger.

    The embedding provider is built the first time something embeds
    (``embed_built`` says whether it was): opening an index to read its
    status or export it loads no embedding model.
    """

    def __init__(
        self,
        chat: ChatService | None,
        embed: EmbeddingService,
        rerank: RerankService | None,
        ledger: Ledger,
        limits: Limits,
    ):
        self.chat, self.embed, self.rerank = chat, embed, rerank
        self.ledger, self.limits = ledger, limits

    @property
    def embed_built(self) -> bool:
        """Whether the embedding provider exists yet."""
        return self.embed.built

    async def aclose(self) -> None:
        """Close every provider (their HTTP connection pools)."""
        for service in (self.chat, self.embed, self.rerank):
            if service is not None:
                await service.aclose()


def build_models(
    settings: Settings,
    cache_kv: KVStore | None = None,
    *,
    ledger: Ledger | None = None,
    chat: ChatModel | None = None,
    embed: EmbeddingModel | None = None,
    rerank: RerankModel | None = None,
    limits: Limits | None = None,
) -> Models:
    """Services for ``settings``; answers are cached in ``cache_kv`` when enabled.

    ``chat``, ``embed`` and ``rerank`` replace the configured providers:
    provider objects or plain functions (see :mod:`kgrag.llm.adapters`);
    they get the same cache, retry, limiter and ledger. Chat and rerank calls
    share ``limits.chat``, embeddings use ``limits.embed``; without
    ``limits`` the services get limiters of their own, sized
    ``llm_max_async`` and ``embedding_max_async``. ``chat`` is None when
    none is given and the resolved chat provider is "none".
    """
    ledger = ledger or Ledger()
    limits = limits or Limits.from_settings(settings)
    retry = RetryPolicy(max_retries=settings.llm.max_retries)
    # Providers open no connection before their first call, so a failure
    # half-way through (say, an unknown chat provider) leaks nothing.
    chat_service = _chat(settings, cache_kv, chat, limits, ledger, retry)
    embed_service = EmbeddingService(
        adapt_embedding(embed) if embed is not None else None,
        factory=None if embed is not None else _embedding_factory(settings),
        ledger=ledger,
        retry=retry,
        limiter=limits.embed,
        batch_size=settings.embedding.batch_size,
        max_async=settings.embedding.max_async,
        tokenizer=settings.chunking.tokenizer,
    )
    rerank_provider = (
        adapt_rerank(rerank) if rerank is not None else build_rerank_provider(settings)
    )
    rerank_service = None
    if rerank_provider is not None:
        rerank_service = RerankService(
            rerank_provider, limiter=limits.chat, ledger=ledger, retry=retry
        )
    return Models(chat_service, embed_service, rerank_service, ledger, limits)


def _chat(
    settings: Settings,
    cache_kv: KVStore | None,
    chat: ChatModel | None,
    limits: Limits,
    ledger: Ledger,
    retry: RetryPolicy,
) -> ChatService | None:
    """The chat service: the injected model, else the configured provider, else None."""
    if chat is not None:
        provider = adapt_chat(chat)
    elif settings.resolved_llm_provider() != "none":
        provider = build_chat_provider(settings)
    else:
        return None
    cache = LLMCache(cache_kv) if settings.llm.enable_cache and cache_kv is not None else None
    return ChatService(
        provider,
        cache=cache,
        limiter=limits.chat,
        ledger=ledger,
        retry=retry,
        temperature=settings.llm.temperature,
        max_tokens=settings.llm.max_tokens,
        timeout=settings.llm.timeout,
    )


def _embedding_factory(settings: Settings) -> Callable[[], EmbeddingProvider]:
    """Builds the configured embedding provider later; an unknown name fails now."""
    name = settings.resolved_embedding_provider()
    if name not in EMBEDDING_PROVIDERS:
        raise UnknownBackendError("embedding provider", name, EMBEDDING_PROVIDERS.names())
    return lambda: build_embedding_provider(settings)
