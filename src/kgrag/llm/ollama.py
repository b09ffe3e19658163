"""Ollama chat and embedding providers (the native ``/api`` endpoints).

Chat uses ``/api/chat`` (one JSON answer, or NDJSON lines when streaming;
``format: "json"`` for JSON mode); embeddings use ``/api/embed``. The base
URL is the server root (``http://localhost:11434``); a trailing ``/v1`` or
``/api`` is tolerated.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, Literal, cast

import numpy as np

from kgrag.errors import ModelResponseError
from kgrag.llm import _http
from kgrag.llm.base import ChatRequest, ChatResult, approx_tokens
from kgrag.llm.http_provider import HTTPChatProvider, HTTPEmbeddingProvider
from kgrag.llm.reasoning import strip_reasoning

DEFAULT_BASE_URL = "http://localhost:11434"


def _root(base_url: str | None) -> str:
    url = (base_url or DEFAULT_BASE_URL).rstrip("/")
    for suffix in ("/v1", "/api"):
        if url.endswith(suffix):
            url = url[: -len(suffix)]
    return url


class _OllamaURL:
    """Ollama's identity and base URL: the server root, a trailing ``/v1`` or ``/api`` dropped."""

    vendor = "ollama"

    @classmethod
    def resolve_base_url(cls, base_url: str | None) -> str:
        return _root(base_url)


class OllamaChatProvider(_OllamaURL, HTTPChatProvider):
    """Chat with a model served by Ollama."""

    def _payload(self, request: ChatRequest, stream: bool) -> dict[str, object]:
        options: dict[str, object] = {"temperature": request.temperature}
        if request.max_tokens:
            options["num_predict"] = request.max_tokens
        extra = dict(request.extra)
        options.update(cast("Mapping[str, object]", extra.pop("options", {})))
        payload: dict[str, object] = {
            "model": self.model,
            "messages": request.messages,
            "stream": stream,
            "options": options,
        }
        if request.json_mode:
            payload["format"] = "json"
        payload.update(extra)
        return payload

    async def chat(self, request: ChatRequest) -> ChatResult:
        body = await _http.post_json(
            self._client, "/api/chat", self._payload(request, False), self.identity
        )
        try:
            text = body["message"].get("content") or ""
        except (KeyError, TypeError, AttributeError) as exc:
            raise ModelResponseError(f"{self.identity}: no message in the answer") from exc
        return _result(strip_reasoning(text), body, request)

    async def stream(
        self, request: ChatRequest, usage: ChatResult | None = None
    ) -> AsyncIterator[str]:
        """Yield content pieces of an NDJSON stream; fill ``usage`` at the end."""
        parts: list[str] = []
        last: dict[str, Any] = {}
        async with _http.stream_lines(
            self._client, "/api/chat", self._payload(request, True), self.identity
        ) as lines:
            async for line in lines:
                if not line.strip():
                    continue
                event = _http.loads(line, self.identity)
                if event.get("error"):
                    raise ModelResponseError(f"{self.identity}: {event['error']}")
                piece = (event.get("message") or {}).get("content")
                if piece:
                    parts.append(piece)
                    yield piece
                if event.get("done"):
                    last = event
        if usage is not None:
            done = _result("".join(parts), last, request)
            usage.text, usage.finish_reason = done.text, done.finish_reason
            usage.prompt_tokens, usage.completion_tokens = (
                done.prompt_tokens,
                done.completion_tokens,
            )


class OllamaEmbeddingProvider(_OllamaURL, HTTPEmbeddingProvider):
    """Embeddings from a model served by Ollama (``/api/embed``)."""

    async def embed(
        self, texts: list[str], kind: Literal["document", "query"] = "document"
    ) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        body = await _http.post_json(
            self._client, "/api/embed", {"model": self.model, "input": texts}, self.identity
        )
        try:
            rows = np.asarray(body["embeddings"], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelResponseError(f"{self.identity}: malformed embeddings answer") from exc
        if rows.ndim != 2 or rows.shape[0] != len(texts):
            raise ModelResponseError(
                f"{self.identity}: {rows.shape[0] if rows.ndim else 0} "
                f"embeddings for {len(texts)} inputs"
            )
        return rows


def _result(text: str, body: dict[str, Any], request: ChatRequest) -> ChatResult:
    prompt = body.get("prompt_eval_count")
    if prompt is None:
        prompt = sum(approx_tokens(str(m.get("content") or "")) for m in request.messages)
    return ChatResult(
        text=text,
        prompt_tokens=int(prompt),
        completion_tokens=int(body.get("eval_count") or approx_tokens(text)),
        finish_reason=body.get("done_reason") or ("stop" if body.get("done") else None),
    )
