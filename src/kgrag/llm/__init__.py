"""Chat, embedding and rerank models behind one service stack.

``build_models(settings, cache_kv)`` is the entry point; see
:mod:`kgrag.llm.service` for the stack, :mod:`kgrag.llm.registry` for
the providers and :mod:`kgrag.llm.adapters` for bringing your own
(plain functions as providers).
"""

from kgrag.llm.adapters import (
    ChatFunction,
    EmbeddingFunction,
    RerankFunction,
    adapt_chat,
    adapt_embedding,
    adapt_rerank,
)
from kgrag.llm.base import (
    ChatProvider,
    ChatRequest,
    ChatResult,
    EmbeddingProvider,
    RerankProvider,
)
from kgrag.llm.cache import LLMCache, MemoryKV
from kgrag.llm.factory import Models, build_models
from kgrag.llm.ledger import Ledger
from kgrag.llm.limiter import Limits, PriorityLimiter
from kgrag.llm.retry import RetryPolicy
from kgrag.llm.service import ChatService, EmbeddingService, RerankService

__all__ = [
    "ChatFunction",
    "ChatProvider",
    "ChatRequest",
    "ChatResult",
    "ChatService",
    "EmbeddingFunction",
    "EmbeddingProvider",
    "EmbeddingService",
    "LLMCache",
    "Ledger",
    "Limits",
    "MemoryKV",
    "Models",
    "PriorityLimiter",
    "RerankFunction",
    "RerankProvider",
    "RerankService",
    "RetryPolicy",
    "adapt_chat",
    "adapt_embedding",
    "adapt_rerank",
    "build_models",
]
