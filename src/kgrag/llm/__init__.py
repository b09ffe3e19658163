"""Chat, embedding and rerank models behind one service stack.

``build_models(settings, cache_kv)`` is the entry point; see
:mod:`kgrag.llm.service` for the stack and :mod:`kgrag.llm.registry` for
the providers.
"""

from kgrag.llm.base import ChatRequest, ChatResult
from kgrag.llm.cache import LLMCache, MemoryKV
from kgrag.llm.factory import Models, build_models
from kgrag.llm.ledger import Ledger
from kgrag.llm.limiter import PriorityLimiter
from kgrag.llm.retry import RetryPolicy
from kgrag.llm.service import ChatService, EmbeddingService, RerankService

__all__ = [
    "ChatRequest",
    "ChatResult",
    "ChatService",
    "EmbeddingService",
    "LLMCache",
    "Ledger",
    "MemoryKV",
    "Models",
    "PriorityLimiter",
    "RerankService",
    "RetryPolicy",
    "build_models",
]
