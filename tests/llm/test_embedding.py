"""EmbeddingService: batching, normalisation, windows for long texts."""

from __future__ import annotations

import numpy as np
import pytest

from kgrag.errors import ModelResponseError, ModelServerError
from kgrag.llm.embedding import EmbeddingService, token_windows
from kgrag.llm.fake import FakeEmbeddingProvider, fake_vector
from kgrag.llm.ledger import Ledger
from kgrag.llm.retry import RetryPolicy

from .stubs import CountingEmbedder


class WordTokenizer:
    """One token per space-separated word (decode joins them back)."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}
        self.words: list[str] = []

    def encode(self, text: str) -> list[int]:
        ids = []
        for word in text.split(" "):
            if word not in self.vocab:
                self.vocab[word] = len(self.words)
                self.words.append(word)
            ids.append(self.vocab[word])
        return ids

    def decode(self, ids: list[int]) -> str:
        return " ".join(self.words[i] for i in ids)


async def test_rows_are_float32_unit_vectors_in_input_order() -> None:
    service = EmbeddingService(CountingEmbedder(dim=8), batch_size=2)
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    out = await service.embed(texts)
    assert out.dtype == np.float32 and out.shape == (5, 8) and service.dim == 8
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0)
    assert [int(np.argmax(row)) for row in out] == [len(t) % 8 for t in texts]


async def test_batches_run_concurrently_under_max_async() -> None:
    provider = CountingEmbedder(delay=0.02)
    ledger = Ledger()
    service = EmbeddingService(provider, ledger=ledger, batch_size=3, max_async=2)
    await service.embed([f"text {i}" for i in range(20)])
    assert [len(b) for b in provider.batches] == [3] * 6 + [2]
    assert provider.max_active == 2
    snap = ledger.snapshot()["embed"]
    assert snap["calls"] == 7 and snap["prompt_tokens"] > 0


async def test_empty_input() -> None:
    service = EmbeddingService(CountingEmbedder(dim=8))
    assert (await service.embed([])).shape == (0, 0)
    await service.embed(["x"])
    assert (await service.embed([])).shape == (0, 8)


def test_token_windows_overlap_and_cover() -> None:
    windows = token_windows(list(range(10)), size=4, overlap=1)
    assert windows == [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]]
    assert token_windows(list(range(3)), size=4, overlap=1) == [[0, 1, 2]]


async def test_long_text_is_window_averaged() -> None:
    provider = FakeEmbeddingProvider(dim=64, max_tokens=16)
    tokenizer = WordTokenizer()
    service = EmbeddingService(provider, tokenizer=tokenizer, batch_size=4)
    words = [f"w{i}" for i in range(40)]
    long_text = " ".join(words)
    out = await service.embed(["short text", long_text])
    # 40 tokens, windows of 16 sharing 2: starts 0, 14, 28 -> lengths 16, 16, 12.
    windows = [" ".join(words[s : s + 16]) for s in (0, 14, 28)]
    expected = sum(len(w.split()) * fake_vector(w, 64) for w in windows)
    expected /= np.linalg.norm(expected)
    assert np.allclose(out[1], expected, atol=1e-6)
    assert np.allclose(out[0], fake_vector("short text", 64), atol=1e-6)


async def test_short_texts_are_not_tokenized() -> None:
    class Exploding:
        def encode(self, text: str) -> list[int]:
            raise AssertionError("tokenizer used for a short text")

    service = EmbeddingService(FakeEmbeddingProvider(max_tokens=8192), tokenizer=Exploding())
    await service.embed(["x" * 5000])


async def test_batch_errors_are_retried() -> None:
    class Flaky(CountingEmbedder):
        failures = 2

        async def embed(self, texts, kind="document"):
            if self.failures:
                self.failures -= 1
                raise ModelServerError("500")
            return await super().embed(texts, kind)

    service = EmbeddingService(Flaky(), retry=RetryPolicy(max_retries=3, base=0.001, cap=0.001))
    assert (await service.embed(["a", "b"])).shape == (2, 8)


async def test_wrong_shapes_are_rejected() -> None:
    class Short(CountingEmbedder):
        async def embed(self, texts, kind="document"):
            return (await super().embed(texts, kind))[:-1]

    with pytest.raises(ModelResponseError, match="expected 2"):
        await EmbeddingService(Short()).embed(["a", "b"])

    class Growing(CountingEmbedder):
        async def embed(self, texts, kind="document"):
            self.dim += 1
            return await super().embed(texts, kind)

    service = EmbeddingService(Growing())
    await service.embed(["a"])
    with pytest.raises(ModelResponseError, match="size changed"):
        await service.embed(["a"])
