"""Protocols and records for chat, embedding and rerank providers.

A *provider* speaks one wire protocol (OpenAI-compatible, Ollama, the
built-in fake, a local model). Providers know nothing of caching, retries,
concurrency or cost: :mod:`kgrag.llm.service` wraps every provider in the
same stack, in this order (outermost first)::

    cache -> retry with backoff -> shared concurrency limit -> cost ledger -> provider

Roles name what a call is for; the ledger accounts by role and the
concurrency limit serves lower priority numbers first.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypedDict, runtime_checkable

import numpy as np

Role = Literal[
    "extract",
    "glean",
    "summary",
    "keywords",
    "conditions",
    "answer",
    "judge",
    "embed",
    "rerank",
    "resolve",
]

# Lower runs first when calls queue on the shared limit.
PRIORITY: dict[str, int] = {
    "keywords": 5,
    "conditions": 5,  # a question's constraints (QueryParam.conditions="llm")
    "answer": 5,
    "judge": 5,  # an evaluation's verdicts (kgrag eval answers|compare)
    "rerank": 5,
    "summary": 8,
    "resolve": 8,  # entity resolution's pair judgements (kgrag dedupe --llm)
    "embed": 9,
    "glean": 9,
    "extract": 10,  # finish started chunks before starting new ones
}


class ChatMessage(TypedDict):
    """One chat turn: ``role`` is "system", "user" or "assistant"."""

    role: str
    content: str


Messages = list[ChatMessage]
"""A conversation, in order: what every prompt builder returns and every chat call takes."""

# Provider-specific request options (ChatRequest.extra): JSON values passed on as they are.
ProviderOptions = dict[str, object]


def approx_tokens(text: str) -> int:
    """Token estimate used where a service reports no usage: 4 characters a token."""
    return len(text) // 4


@dataclass(slots=True)
class ChatRequest:
    messages: Messages
    role: Role = "answer"
    json_mode: bool = False
    max_tokens: int | None = None
    temperature: float = 0.0
    extra: ProviderOptions = field(default_factory=dict)


@dataclass(slots=True)
class ChatResult:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    cached: bool = False


@runtime_checkable
class ChatProvider(Protocol):
    """One chat endpoint. ``identity`` names provider, model and host (never the key)."""

    identity: str

    async def chat(self, request: ChatRequest) -> ChatResult: ...
    def stream(self, request: ChatRequest, usage: ChatResult | None = None) -> AsyncIterator[str]:
        """Yield the answer in pieces.

        When ``usage`` is given, the provider fills in its token counts and
        ``finish_reason`` (and the whole ``text``) once the stream ends.
        """

    async def aclose(self) -> None: ...


@runtime_checkable
class EmbeddingProvider(Protocol):
    """One embedding endpoint or local model.

    ``embed`` returns a float32 array of shape (len(texts), dim). ``kind``
    lets asymmetric models (e5: "query: " / "passage: ") prefix the text.
    """

    identity: str
    max_tokens: int

    async def embed(
        self, texts: list[str], kind: Literal["document", "query"] = "document"
    ) -> np.ndarray: ...
    async def aclose(self) -> None: ...


@runtime_checkable
class RerankProvider(Protocol):
    identity: str

    async def rerank(
        self, query: str, documents: list[str], top_n: int | None = None
    ) -> list[tuple[int, float]]:
        """(index into documents, relevance score), best first."""

    async def aclose(self) -> None: ...
