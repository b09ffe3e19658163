"""Build every model service from :class:`kgrag.config.Settings`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgrag.llm.cache import LLMCache
from kgrag.llm.embedding import EmbeddingService
from kgrag.llm.ledger import Ledger
from kgrag.llm.limiter import shared_limiter
from kgrag.llm.registry import build_chat_provider, build_embedding_provider, build_rerank_provider
from kgrag.llm.retry import RetryPolicy
from kgrag.llm.service import ChatService, RerankService


@dataclass
class Models:
    """The services one kgrag instance uses, and their shared ledger."""

    chat: ChatService | None
    embed: EmbeddingService
    rerank: RerankService | None
    ledger: Ledger

    async def aclose(self) -> None:
        """Close every provider (their HTTP connection pools)."""
        for service in (self.chat, self.embed, self.rerank):
            if service is not None:
                await service.aclose()


def build_models(
    settings: Any, cache_kv: Any | None = None, *, ledger: Ledger | None = None
) -> Models:
    """Services for ``settings``; answers are cached in ``cache_kv`` when enabled.

    Chat and rerank calls share the process-wide "chat" limiter (sized
    ``llm_max_async``); embeddings share the process-wide "embed" limiter
    (``embedding_max_async``). ``chat`` is None when the resolved chat
    provider is "none".
    """
    ledger = ledger or Ledger()
    retry = RetryPolicy(max_retries=settings.llm_max_retries)
    chat_limiter = shared_limiter("chat", settings.llm_max_async)
    # Providers open no connection before their first call, so a failure
    # half-way through (say, an unknown embedding provider) leaks nothing.
    chat = None
    if settings.resolved_llm_provider() != "none":
        cache = LLMCache(cache_kv) if settings.enable_llm_cache and cache_kv is not None else None
        chat = ChatService(
            build_chat_provider(settings),
            cache=cache,
            limiter=chat_limiter,
            ledger=ledger,
            retry=retry,
            temperature=settings.llm_temperature,
            max_tokens=settings.llm_max_tokens,
            timeout=settings.llm_timeout,
        )
    embed = EmbeddingService(
        build_embedding_provider(settings),
        ledger=ledger,
        retry=retry,
        limiter=shared_limiter("embed", settings.embedding_max_async),
        batch_size=settings.embedding_batch_size,
        max_async=settings.embedding_max_async,
        tokenizer=settings.tokenizer,
    )
    rerank_provider = build_rerank_provider(settings)
    rerank = None
    if rerank_provider is not None:
        rerank = RerankService(rerank_provider, limiter=chat_limiter, ledger=ledger, retry=retry)
    return Models(chat=chat, embed=embed, rerank=rerank, ledger=ledger)
