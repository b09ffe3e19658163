"""The whole indexing pipeline over real HTTP against the fake OpenAI-compatible server."""

from __future__ import annotations

import pytest

from kgrag.api.facade import KGRag
from tests.support.settings import http_settings
from tests.synth import run_synth, synth_stats

from .corpus import write_book_parts


async def _index(tmp_path, base_url, **extra):
    docs = write_book_parts(tmp_path / "docs", 5, chars=4000)
    async with KGRag(http_settings(tmp_path / "idx", base_url, **extra)) as rag:
        report = await rag.index_paths(docs)
        status = await rag.status()
    return report, status


@pytest.mark.parametrize(
    "flags",
    [
        (),
        ("--error-rate", "0.2"),
        ("--garbage-rate", "0.3"),
        ("--max-concurrency", "2", "--latency", "0.05"),
    ],
    ids=["plain", "errors", "garbage", "429s"],
)
async def test_every_document_is_processed(tmp_path, flags):
    with run_synth(*flags) as base_url:
        report, status = await _index(tmp_path, base_url, llm_max_retries=8)
        stats = synth_stats(base_url)
    assert report.failed == [] and len(report.processed) == 5
    assert status["documents"]["processed"]["count"] == 5
    assert status["graph"]["entities"] > 20 and status["graph"]["relations"] > 10
    if "--error-rate" in flags:
        assert stats["errors_500"] > 0  # errors really happened and were retried
    if "--garbage-rate" in flags:
        assert stats["garbage"] > 0
    if "--max-concurrency" in flags:
        assert stats["rejected_429"] > 0


async def test_a_dead_endpoint_fails_documents_not_the_batch(tmp_path):
    with run_synth() as base_url:
        dead = base_url.replace("/v1", "/nowhere/v1")
        # Chat goes to a path that answers 404: every extraction fails fast.
        report, status = await _index(
            tmp_path, dead, embedding_base_url=base_url, llm_max_retries=0
        )
    assert len(report.failed) == 5 and report.processed == []
    assert status["documents"]["failed"]["count"] == 5
    assert all(f["error"] for f in status["failed"])


async def test_streamed_answer_over_http(tmp_path):
    with run_synth("--per-token", "0.0005") as base_url:
        docs = write_book_parts(tmp_path / "docs", 2, chars=3000)
        async with KGRag(http_settings(tmp_path / "idx", base_url)) as rag:
            await rag.index_paths(docs)
            stream = rag.stream("Who is Scrooge?", mode="mix")
            pieces = [piece async for piece in stream]
        stats = synth_stats(base_url)
    assert len(pieces) > 1 and "".join(pieces).strip()
    # Two streams: the keywords call (asked for as one until the model answers) and the answer.
    assert stats["stream_calls"] == 2 and stats["calls"]["keywords"] == 1


async def test_garbage_replies_are_recovered_or_reported(tmp_path):
    with run_synth() as base_url:
        _, clean = await _index(tmp_path / "clean", base_url)
    with run_synth("--garbage-rate", "0.5") as base_url:
        docs = write_book_parts(tmp_path / "docs", 5, chars=4000)
        async with KGRag(http_settings(tmp_path / "idx", base_url)) as rag:
            report = await rag.index_paths(docs)
            status = await rag.status()
            assert (await rag.check()).ok
        stats = synth_stats(base_url)
    assert stats["garbage"] > 0 and not report.failed
    # every document that needed a re-ask says so; none is silently complete
    assert report.warnings and status["warnings"]
    assert all(
        any("re-ask" in w or "malformed" in w for w in ws) for ws in report.warnings.values()
    )
    entities, relations = status["graph"]["entities"], status["graph"]["relations"]
    assert abs(entities - clean["graph"]["entities"]) <= 0.1 * clean["graph"]["entities"]
    assert abs(relations - clean["graph"]["relations"]) <= 0.15 * clean["graph"]["relations"]
