"""OpenAI-compatible chat and embedding providers.

Speaks ``/chat/completions`` and ``/embeddings`` as served by OpenAI, vLLM,
the llama.cpp server, LM Studio, DeepSeek, DashScope and friends. The base
URL is the one ending in ``/v1`` (or the vendor's equivalent).
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from kgrag.errors import ModelRequestError, ModelResponseError
from kgrag.llm import _http
from kgrag.llm.base import ChatRequest, ChatResult, approx_tokens
from kgrag.llm.http_provider import EmbeddingOptions, HTTPChatProvider, HTTPEmbeddingProvider
from kgrag.llm.reasoning import strip_reasoning

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from kgrag.config.settings import Settings

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIEmbeddingOptions(EmbeddingOptions, total=False):
    """The embedding options, and the vector size to ask for (models that can shorten)."""

    dimensions: int | None


class OpenAIChatProvider(HTTPChatProvider):
    """Chat over an OpenAI-compatible ``/chat/completions`` endpoint."""

    vendor = "openai"
    default_base_url = DEFAULT_BASE_URL

    def _payload(self, request: ChatRequest, stream: bool) -> dict[str, object]:
        payload: dict[str, object] = {
            "model": self.model,
            "messages": request.messages,
            "temperature": request.temperature,
        }
        if request.max_tokens:
            payload["max_tokens"] = request.max_tokens
        if request.json_mode:
            payload["response_format"] = {"type": "json_object"}
        if stream:
            payload["stream"] = True
            payload["stream_options"] = {"include_usage": True}
        payload.update(request.extra)
        return payload

    async def chat(self, request: ChatRequest) -> ChatResult:
        body = await _http.post_json(
            self._client, "/chat/completions", self._payload(request, False), self.identity
        )
        try:
            choice = body["choices"][0]
            text = choice["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ModelResponseError(f"{self.identity}: no choices in the answer") from exc
        usage = body.get("usage") or {}
        return ChatResult(
            text=strip_reasoning(text),
            prompt_tokens=int(usage.get("prompt_tokens") or _prompt_estimate(request)),
            completion_tokens=int(usage.get("completion_tokens") or approx_tokens(text)),
            finish_reason=choice.get("finish_reason"),
        )

    async def stream(
        self, request: ChatRequest, usage: ChatResult | None = None
    ) -> AsyncIterator[str]:
        """Yield content deltas of an SSE stream; fill ``usage`` at the end."""
        parts: list[str] = []
        finish: str | None = None
        counts: dict[str, Any] = {}
        async with _http.stream_lines(
            self._client, "/chat/completions", self._payload(request, True), self.identity
        ) as lines:
            async for line in lines:
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    continue  # read on to the end, so the connection can be reused
                event = _http.loads(data, self.identity)
                counts = event.get("usage") or counts
                for choice in event.get("choices") or []:
                    piece = (choice.get("delta") or {}).get("content")
                    finish = choice.get("finish_reason") or finish
                    if piece:
                        parts.append(piece)
                        yield piece
        if usage is not None:
            text = "".join(parts)
            usage.text = text
            usage.finish_reason = finish
            usage.prompt_tokens = int(counts.get("prompt_tokens") or _prompt_estimate(request))
            usage.completion_tokens = int(counts.get("completion_tokens") or approx_tokens(text))


class OpenAIEmbeddingProvider(HTTPEmbeddingProvider):
    """Embeddings over an OpenAI-compatible ``/embeddings`` endpoint.

    Asks for base64 (little-endian float32) and decodes it with numpy; a
    server answering float lists is understood too, and one that rejects
    ``encoding_format`` is asked again without it.
    """

    vendor = "openai"
    default_base_url = DEFAULT_BASE_URL

    def __init__(
        self, model: str, *, dimensions: int | None = None, **kwargs: Unpack[EmbeddingOptions]
    ):
        super().__init__(model, **kwargs)
        self.dimensions = dimensions
        self._base64 = True

    @classmethod
    def settings_kwargs(cls, settings: Settings) -> OpenAIEmbeddingOptions:
        return OpenAIEmbeddingOptions(
            **super().settings_kwargs(settings), dimensions=settings.embedding.dim
        )

    async def embed(
        self, texts: list[str], kind: Literal["document", "query"] = "document"
    ) -> np.ndarray:
        # The OpenAI API rejects empty strings; a space embeds as "nothing".
        payload: dict[str, object] = {"model": self.model, "input": [t or " " for t in texts]}
        if self.dimensions:
            payload["dimensions"] = self.dimensions
        if self._base64:
            try:
                body = await _http.post_json(
                    self._client,
                    "/embeddings",
                    {**payload, "encoding_format": "base64"},
                    self.identity,
                )
                return _decode(body, len(texts), self.identity)
            except ModelRequestError as exc:
                if "encoding" not in str(exc).lower():
                    raise
                self._base64 = False
        body = await _http.post_json(self._client, "/embeddings", payload, self.identity)
        return _decode(body, len(texts), self.identity)


def _prompt_estimate(request: ChatRequest) -> int:
    return sum(approx_tokens(str(m.get("content") or "")) for m in request.messages)


def _decode(body: Any, expected: int, what: str) -> np.ndarray:
    """Rows of an embeddings answer, in input order, as float32."""
    try:
        items = sorted(body["data"], key=lambda d: d.get("index", 0))
        rows = [_vector(item["embedding"]) for item in items]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ModelResponseError(f"{what}: malformed embeddings answer") from exc
    if len(rows) != expected:
        raise ModelResponseError(f"{what}: {len(rows)} embeddings for {expected} inputs")
    if not rows:
        return np.zeros((0, 0), dtype=np.float32)
    if len({r.shape[0] for r in rows}) != 1:
        raise ModelResponseError(f"{what}: embeddings of different sizes in one answer")
    return np.stack(rows)


def _vector(value: object) -> np.ndarray:
    if isinstance(value, str):
        return np.frombuffer(base64.b64decode(value), dtype="<f4").astype(np.float32)
    return np.asarray(value, dtype=np.float32)
