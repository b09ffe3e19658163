"""The embedding service: batching, windows for long texts, the stack.

Texts are cut into batches sent concurrently, each batch through retry ->
limiter -> ledger (role "embed") -> provider. A text longer than the
provider's ``max_tokens`` is embedded as overlapping token windows whose
vectors are averaged (weighted by window length) and re-normalised. Every
row returned is float32 and L2-normalised.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from kgrag.errors import ModelResponseError
from kgrag.llm.base import PRIORITY, EmbeddingProvider, approx_tokens
from kgrag.llm.ledger import Ledger
from kgrag.llm.limiter import PriorityLimiter
from kgrag.llm.retry import RetryPolicy, call_with_retry

if TYPE_CHECKING:
    from kgrag.llm.tokenizer import Tokenizer

Kind = Literal["document", "query"]
INLINE_SPLIT_CHARS = 20_000  # more text than this is cut into windows in a worker thread


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (all-zero rows stay zero), as float32."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0.0, 1.0, norms)


def token_windows(tokens: list[int], size: int, overlap: int) -> list[list[int]]:
    """Windows of ``size`` tokens, neighbours sharing ``overlap``, covering all."""
    step = max(1, size - overlap)
    windows = []
    for start in range(0, len(tokens), step):
        windows.append(tokens[start : start + size])
        if start + size >= len(tokens):
            break
    return windows


class EmbeddingService:
    """Embeddings through batching, retry, the embedding limiter and the ledger.

    The provider may be given as a zero-argument ``factory`` instead, called
    the first time the provider is needed: commands that never embed
    (``status``, ``export``) then never load a model or its package.
    """

    def __init__(
        self,
        provider: EmbeddingProvider | None = None,
        *,
        factory: Callable[[], EmbeddingProvider] | None = None,
        limiter: PriorityLimiter | None = None,
        ledger: Ledger | None = None,
        retry: RetryPolicy | None = None,
        batch_size: int = 32,
        max_async: int = 8,
        tokenizer: Tokenizer | str | None = None,
    ):
        """``tokenizer``: an object with encode/decode, or a bundled encoding's
        name, loaded only when a text needs windows (default o200k_base)."""
        if (provider is None) == (factory is None):
            raise TypeError("EmbeddingService needs a provider or a factory (one of them)")
        self._provider, self._factory = provider, factory
        self.limiter = limiter or PriorityLimiter(max_async, "embed")
        self.ledger = ledger or Ledger()
        self.retry = retry or RetryPolicy()
        self.batch_size, self.max_async = batch_size, max_async
        self._tokenizer = tokenizer
        self._dim: int | None = None

    def retrying(self, policy: RetryPolicy) -> EmbeddingService:
        """A view of this service that retries by ``policy`` (a query's few, quick retries);
        it shares the provider, limiter and ledger."""
        view = copy.copy(self)
        view.retry = policy
        return view

    @property
    def provider(self) -> EmbeddingProvider:
        """The provider (built by the factory on first use)."""
        if self._provider is None:
            assert self._factory is not None
            self._provider = self._factory()
        return self._provider

    @property
    def built(self) -> bool:
        """Whether the provider exists yet (false until a lazy one is first needed)."""
        return self._provider is not None

    @property
    def identity(self) -> str:
        return self.provider.identity

    @property
    def dim(self) -> int | None:
        """Vector size; known after the first successful call."""
        return self._dim

    @property
    def max_tokens(self) -> int:
        return int(getattr(self.provider, "max_tokens", 8192))

    async def embed(self, texts: Sequence[str], kind: Kind = "document") -> np.ndarray:
        """A (len(texts), dim) float32 matrix of unit rows."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        if sum(len(t) for t in texts) > INLINE_SPLIT_CHARS:  # tokenizing: off the event loop
            pieces, owners, weights = await asyncio.to_thread(self._split, texts)
        else:
            pieces, owners, weights = self._split(texts)
        vectors = await self._embed_pieces(pieces, kind)
        if len(pieces) == len(texts):
            return normalise_rows(vectors)
        summed = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
        np.add.at(summed, np.asarray(owners), vectors * np.asarray(weights, np.float32)[:, None])
        return normalise_rows(summed)

    def _split(self, texts: list[str]) -> tuple[list[str], list[int], list[float]]:
        """Pieces to embed, the text each belongs to, and its weight."""
        limit = self.max_tokens
        pieces: list[str] = []
        owners: list[int] = []
        weights: list[float] = []
        for i, text in enumerate(texts):
            # A token covers at least one UTF-8 byte: short texts need no tokenizing.
            if len(text) <= limit // 4 or len(text.encode("utf-8", "ignore")) <= limit:
                windows = [(text, 1.0)]
            else:
                windows = self._windows(text, limit)
            for piece, weight in windows:
                pieces.append(piece)
                owners.append(i)
                weights.append(weight)
        return pieces, owners, weights

    def _windows(self, text: str, limit: int) -> list[tuple[str, float]]:
        if self._tokenizer is None or isinstance(self._tokenizer, str):
            from kgrag.llm.tokenizer import get_tokenizer

            self._tokenizer = get_tokenizer(self._tokenizer or "o200k_base")
        tokens = self._tokenizer.encode(text)
        if len(tokens) <= limit:
            return [(text, 1.0)]
        return [
            (self._tokenizer.decode(w), float(len(w)))
            for w in token_windows(tokens, limit, max(1, limit // 8))
        ]

    async def _embed_pieces(self, pieces: list[str], kind: Kind) -> np.ndarray:
        batches = [pieces[i : i + self.batch_size] for i in range(0, len(pieces), self.batch_size)]
        if len(batches) == 1:
            return await self._batch(batches[0], kind)
        tasks = [asyncio.ensure_future(self._batch(b, kind)) for b in batches]
        try:
            results = await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            raise
        return np.concatenate(results)

    async def _batch(self, batch: list[str], kind: Kind) -> np.ndarray:
        return await call_with_retry(self.retry, lambda: self._attempt(batch, kind))

    async def _attempt(self, batch: list[str], kind: Kind) -> np.ndarray:
        # Query embeddings (someone is waiting) overtake indexing batches.
        priority = PRIORITY["answer"] if kind == "query" else PRIORITY["embed"]
        async with self.limiter.slot(priority):
            with self.ledger.timed("embed", model=self.identity) as usage:
                usage["prompt_tokens"] = sum(approx_tokens(t) for t in batch)
                vectors = await self.provider.embed(batch, kind)
                return self._check(vectors, len(batch))

    def _check(self, vectors: object, rows: int) -> np.ndarray:
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != rows:
            raise ModelResponseError(
                f"{self.identity}: expected {rows} embeddings, got shape {matrix.shape}"
            )
        if self._dim is None:
            self._dim = int(matrix.shape[1])
        elif matrix.shape[1] != self._dim:
            raise ModelResponseError(
                f"{self.identity}: embedding size changed from {self._dim} to {matrix.shape[1]}"
            )
        if not np.isfinite(matrix).all():
            raise ModelResponseError(f"{self.identity}: embeddings contain NaN or infinity")
        return matrix

    async def aclose(self) -> None:
        if self._provider is not None:
            await self._provider.aclose()
