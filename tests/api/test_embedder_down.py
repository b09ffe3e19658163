"""A query whose embedding service is down answers from the lexical (BM25) index, and says so.

The index is built through the fake OpenAI-compatible server's embeddings;
the server is then stopped, so the same embedder (same identity, the index
opens) refuses every connection.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from kgrag import KGRag, Settings
from tests.support.fake_openai import fake_openai

from .helpers import settings

TEXTS = [
    "Ada Lovelace wrote notes on the Analytical Engine of Charles Babbage in 1843.",
    "Grace Hopper developed the first compiler for the UNIVAC computer.",
]
QUESTION = "Who wrote notes on the Analytical Engine?"
BOUND = 1.5  # seconds a query may spend embedding the question
WITHIN = 5.0  # the whole query, model calls included


def _settings(workdir: Path, base_url: str, **overrides) -> Settings:
    given = {"query_embed_timeout": BOUND} | overrides
    return settings(
        workdir,
        embedding_provider="openai",
        embedding_base_url=base_url,
        embedding_api_key="sk-test",
        **given,
    )


def _indexed(workdir: Path) -> str:
    """Index :data:`TEXTS` through the fake server's embeddings; its (now dead) base URL."""

    async def run(base_url: str) -> None:
        async with KGRag(_settings(workdir, base_url)) as rag:
            await rag.insert(TEXTS)

    with fake_openai() as server:
        asyncio.run(run(server.base_url))
        return server.base_url


def test_a_query_with_the_embedder_down_answers_from_bm25_with_a_note(tmp_path):
    base_url = _indexed(tmp_path / "idx")

    async def run() -> tuple[float, object, dict]:
        async with KGRag(_settings(tmp_path / "idx", base_url)) as rag:
            started = time.perf_counter()
            result = await rag.query(QUESTION, mode="mix")
            elapsed = time.perf_counter() - started
            data = await rag.query_data(QUESTION, mode="mix", trace=True)
        return elapsed, result, data

    elapsed, result, data = asyncio.run(run())
    assert elapsed < WITHIN, elapsed
    note = result.retrieval_note or ""
    assert "embedding service" in note and "lexical (BM25)" in note, note
    assert "127.0.0.1" not in note and "http" not in note
    assert not result.no_context and "Ada Lovelace" in result.context
    assert data["retrieval_note"] == note
    assert {"stage": "retrieval", "message": note} in data["trace"]["notes"]


def test_a_working_embedder_leaves_no_note(tmp_path):
    async def run(base_url: str) -> object:
        async with KGRag(_settings(tmp_path / "idx", base_url)) as rag:
            await rag.insert(TEXTS)
            return await rag.query(QUESTION, mode="mix")

    with fake_openai() as server:
        result = asyncio.run(run(server.base_url))
    assert result.retrieval_note is None and "Ada Lovelace" in result.context


def test_the_cli_prints_the_note(tmp_path):
    base_url = _indexed(tmp_path / "idx")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGRAG_", "OPENAI_"))}
    env.update(
        KGRAG_LLM_PROVIDER="fake",
        KGRAG_EXTRACTOR="llm",
        KGRAG_EMBEDDING_PROVIDER="openai",
        KGRAG_EMBEDDING_BASE_URL=base_url,
        KGRAG_EMBEDDING_API_KEY="sk-test",
        KGRAG_QUERY_EMBED_TIMEOUT=str(BOUND),
    )
    args = ["query", "--workdir", str(tmp_path / "idx"), "--mode", "mix", QUESTION]
    out = subprocess.run(
        [sys.executable, "-m", "kgrag.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "only the lexical (BM25) index was searched" in out.stderr, out.stderr


class _Embedder:
    """An embedding function that answers, until told to hang."""

    def __init__(self) -> None:
        self.hang = False

    async def __call__(self, texts: list[str]) -> np.ndarray:
        if self.hang:
            await asyncio.sleep(60)
        rows = [[float(len(t) % 7 + 1), float(t.count("a") + 1), 1.0] for t in texts]
        return np.asarray(rows, dtype=np.float32)


async def test_an_embedder_that_never_answers_costs_one_bound(tmp_path):
    embed = _Embedder()
    async with KGRag(settings(tmp_path / "idx", query_embed_timeout=BOUND), embed=embed) as rag:
        await rag.insert(TEXTS)
        embed.hang = True
        started = time.perf_counter()
        result = await rag.query(QUESTION, mode="mix")
        elapsed = time.perf_counter() - started
    assert BOUND - 0.2 < elapsed < WITHIN, elapsed
    assert result.retrieval_note is not None and f"within {BOUND:g} s" in result.retrieval_note
    assert "Ada Lovelace" in result.context


def test_a_refused_embedder_is_given_up_on_quickly(tmp_path):
    base_url = _indexed(tmp_path / "idx")

    async def run() -> tuple[float, object]:
        async with KGRag(_settings(tmp_path / "idx", base_url, query_embed_timeout=30.0)) as rag:
            started = time.perf_counter()
            result = await rag.query(QUESTION, mode="mix")
            return time.perf_counter() - started, result

    elapsed, result = asyncio.run(run())
    assert elapsed < 3.0, elapsed  # two quick retries, not the indexing policy's six
    assert "refused the connection" in (result.retrieval_note or "")
