"""A query whose chat model is unreachable answers extractively, after one bounded wait.

The bound is on reaching the model: a slow model writing a long answer is
not cut off (see ``ChatService.bounded``).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgrag import KGRag, Settings
from tests.support.paced_chat import ANSWER, Pace, PacedChat

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


def _paced_llm(workdir: Path, server: PacedChat, bound: float = BOUND) -> Settings:
    return settings(
        workdir,
        llm_provider="openai",
        llm_base_url=server.base_url,
        llm_api_key="sk-test",
        query_llm_timeout=bound,
    )


def test_the_default_bound_is_ten_seconds():
    assert Settings().query.llm_timeout == 10


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


async def test_a_slow_model_writing_a_long_answer_is_not_cut_off(tmp_path):
    await _index(tmp_path / "idx")
    with PacedChat(Pace(first=0.05, total=3.0)) as server:
        async with KGRag(_paced_llm(tmp_path / "idx", server, bound=1.0)) as rag:
            started = time.perf_counter()
            result = await rag.query(QUESTION, mode="local", ll_keywords=["Ada Lovelace"])
            elapsed = time.perf_counter() - started
            cost = rag.models.ledger.snapshot()["answer"]
    assert elapsed >= 2.9, elapsed  # waited past the bound: the model was answering
    assert not result.extractive and result.fallback_reason is None
    assert result.answer == ANSWER
    assert server.streamed() == [True]  # asked for as a stream, to see the model answer
    assert (cost["calls"], cost["errors"], cost["prompt_tokens"]) == (1, 0, 321)


async def test_after_the_keywords_call_the_answer_call_is_an_ordinary_call(tmp_path):
    await _index(tmp_path / "idx")
    with PacedChat(Pace(first=0.05, total=2.0)) as server:
        async with KGRag(_paced_llm(tmp_path / "idx", server, bound=1.0)) as rag:
            result = await rag.query(QUESTION, mode="local")
    assert not result.extractive and result.answer == ANSWER
    assert result.keywords["source"] == "llm"
    assert server.streamed() == [True, False]  # keywords reached the model; the answer did not wait


async def test_a_model_that_sends_no_first_piece_falls_back_within_the_bound(tmp_path):
    await _index(tmp_path / "idx")
    with PacedChat(Pace(first=None)) as server:
        async with KGRag(_paced_llm(tmp_path / "idx", server)) as rag:
            started = time.perf_counter()
            result = await rag.query(QUESTION, mode="local", ll_keywords=["Ada Lovelace"])
            elapsed = time.perf_counter() - started
    assert BOUND - 0.2 < elapsed < BOUND + 1.5, elapsed
    assert result.extractive and f"within {BOUND:g} s" in (result.fallback_reason or "")


async def test_a_5xx_storm_falls_back_within_the_bound(tmp_path):
    await _index(tmp_path / "idx")
    with PacedChat(Pace(status=503)) as server:
        async with KGRag(_paced_llm(tmp_path / "idx", server)) as rag:
            started = time.perf_counter()
            result = await rag.query(QUESTION, mode="local")
            elapsed = time.perf_counter() - started
    assert elapsed < BOUND + 1.5, elapsed  # one wait: keywords; the answer call is not made
    assert result.extractive and result.keywords["source"] == "heuristic"
    assert len(server.requests) >= 2  # retried inside the bound


@pytest.mark.parametrize("mode", ["local", "bypass"])
async def test_an_answer_asked_for_as_a_stream_is_cached(tmp_path, mode):
    await _index(tmp_path / "idx")
    with PacedChat(Pace(first=0.05, total=0.2)) as server:
        async with KGRag(_paced_llm(tmp_path / "idx", server)) as rag:
            first = await rag.query(QUESTION, mode=mode, ll_keywords=["Ada Lovelace"])
            second = await rag.query(QUESTION, mode=mode, ll_keywords=["Ada Lovelace"])
            hits = rag.models.ledger.snapshot()["answer"]["cache_hits"]
    assert first.answer == second.answer == ANSWER and not first.cached and second.cached
    assert server.streamed() == [True] and hits == 1  # the second query made no HTTP call
