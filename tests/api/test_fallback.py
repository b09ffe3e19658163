"""A query whose chat model is unreachable answers extractively, after one bounded wait."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgrag import KGRag, Settings

from .helpers import QUESTION, TEXT, settings
from .servers import closed_port, silent_server

BOUND = 1.5


async def _index(workdir: Path) -> None:
    async with KGRag(settings(workdir)) as rag:
        await rag.insert([TEXT])


def _dead_llm(workdir: Path, port: int, **overrides) -> Settings:
    return settings(
        workdir,
        llm_provider="openai",
        llm_base_url=f"http://127.0.0.1:{port}/v1",
        llm_api_key="sk-test",
        query_llm_timeout=BOUND,
        **overrides,
    )


def test_the_default_bound_is_ten_seconds():
    assert Settings().query_llm_timeout == 10


async def test_refused_connection_falls_back_within_the_bound(tmp_path):
    await _index(tmp_path / "idx")
    async with KGRag(_dead_llm(tmp_path / "idx", closed_port())) as rag:
        started = time.perf_counter()
        result = await rag.query(QUESTION, mode="local")
        elapsed = time.perf_counter() - started
        errors = rag.models.ledger.snapshot()["keywords"]["errors"]
    assert elapsed < BOUND + 1.5, elapsed  # one wait: keywords; the answer call is not made
    assert result.extractive and result.kind == "answer"
    assert result.fallback_reason and f"within {BOUND:g} s" in result.fallback_reason
    assert "Best supporting passages" in result.answer and "Ada Lovelace" in result.answer
    assert result.fallback_reason in result.answer  # the answer itself says why
    assert result.keywords["source"] == "heuristic" and errors >= 1


async def test_silent_server_falls_back_within_the_bound(tmp_path):
    await _index(tmp_path / "idx")
    with silent_server() as port:
        async with KGRag(_dead_llm(tmp_path / "idx", port)) as rag:
            started = time.perf_counter()
            result = await rag.query(QUESTION, mode="local", ll_keywords=["Ada Lovelace"])
            elapsed = time.perf_counter() - started
            stream = rag.stream(QUESTION, mode="local", ll_keywords=["Ada Lovelace"])
            streamed = "".join([piece async for piece in stream])
    assert BOUND - 0.2 < elapsed < BOUND + 1.5, elapsed  # the answer call waited, once
    assert result.extractive and "did not answer" in (result.fallback_reason or "")
    assert stream.extractive and stream.fallback_reason and "Best supporting" in streamed


async def test_a_working_model_is_not_affected(tmp_path):
    await _index(tmp_path / "idx")
    async with KGRag(settings(tmp_path / "idx", query_llm_timeout=BOUND)) as rag:
        result = await rag.query(QUESTION, mode="local")
    assert not result.extractive and result.fallback_reason is None


@pytest.mark.parametrize("stream", [False, True])
def test_cli_says_why_on_stderr(tmp_path, stream):
    asyncio.run(_index(tmp_path / "idx"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGRAG_", "OPENAI_"))}
    env.update(
        KGRAG_LLM_PROVIDER="openai",
        KGRAG_LLM_BASE_URL=f"http://127.0.0.1:{closed_port()}/v1",
        KGRAG_LLM_API_KEY="sk-test",
        KGRAG_EMBEDDING_PROVIDER="fake",
        KGRAG_EXTRACTOR="llm",
        KGRAG_QUERY_LLM_TIMEOUT=str(BOUND),
    )
    args = ["query", "--workdir", str(tmp_path / "idx"), "--mode", "local", QUESTION]
    out = subprocess.run(
        [sys.executable, "-m", "kgrag.cli.main", *args, *(["--stream"] if stream else [])],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "Best supporting passages" in out.stdout
    assert "answered extractively" in out.stderr and f"within {BOUND:g} s" in out.stderr
