"""A counting embedder for the embedding-service tests (the scripted chat: ``tests.support.chat``)."""

from __future__ import annotations

import asyncio

import numpy as np


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
