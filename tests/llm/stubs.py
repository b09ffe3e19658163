"""Small scripted providers for the service-stack tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import numpy as np

from kgrag.llm.base import ChatRequest, ChatResult


class ScriptedChat:
    """Chat provider answering from a script of results and exceptions.

    Each call pops the next script entry (an exception is raised, a string
    becomes the answer); an empty script answers "ok". ``delay`` seconds
    pass inside every call; ``calls`` records the requests.
    """

    def __init__(
        self,
        *script: Any,
        identity: str = "stub:model@host",
        delay: float = 0.0,
        finish_reason: str = "stop",
    ):
        self.identity = identity
        self.script = list(script)
        self.delay = delay
        self.finish_reason = finish_reason
        self.calls: list[ChatRequest] = []
        self.active = 0
        self.max_active = 0
        self.closed = False

    def _next(self, request: ChatRequest) -> str:
        self.calls.append(request)
        item = self.script.pop(0) if self.script else "ok"
        if isinstance(item, BaseException):
            raise item
        return item

    async def chat(self, request: ChatRequest) -> ChatResult:
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            text = self._next(request)
        finally:
            self.active -= 1
        return ChatResult(
            text=text,
            prompt_tokens=10,
            completion_tokens=len(text),
            finish_reason=self.finish_reason,
        )

    async def stream(
        self, request: ChatRequest, usage: ChatResult | None = None
    ) -> AsyncIterator[str]:
        text = self._next(request)
        for word in text.split(" "):
            yield word
        if usage is not None:
            usage.text, usage.prompt_tokens, usage.completion_tokens = text, 10, len(text)

    async def aclose(self) -> None:
        self.closed = True


class CountingEmbedder:
    """Embeds a text as a one-hot-ish vector of its length; records batches."""

    def __init__(self, dim: int = 8, max_tokens: int = 8192, delay: float = 0.0):
        self.identity = f"count:{dim}"
        self.dim, self.max_tokens, self.delay = dim, max_tokens, delay
        self.batches: list[list[str]] = []
        self.active = 0
        self.max_active = 0

    async def embed(self, texts: list[str], kind: str = "document") -> np.ndarray:
        self.batches.append(list(texts))
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
        finally:
            self.active -= 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i, len(text) % self.dim] = 3.0  # not unit length on purpose
        return out

    async def aclose(self) -> None:
        return None


def msgs(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]
