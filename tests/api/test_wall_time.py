"""The ledger's wall time: seconds during which a role had a call in flight, beside summed time."""

from __future__ import annotations

import asyncio
import time

import pytest

from kgrag import KGRag
from kgrag.llm import ChatService, Ledger, PriorityLimiter
from tests.support.chat import ScriptedChat

from .helpers import settings


def sleepy() -> ScriptedChat:
    """A chat model whose every call (and stream) takes 0.2 s."""
    return ScriptedChat(identity="sleepy", delay=0.2)


def _service(ledger: Ledger, limit: int = 4) -> ChatService:
    return ChatService(sleepy(), cache=None, limiter=PriorityLimiter(limit), ledger=ledger)


async def test_parallel_calls_sum_seconds_but_not_wall_time():
    ledger = Ledger()
    service = _service(ledger)
    await asyncio.gather(*(service.chat([{"role": "user", "content": str(i)}]) for i in range(4)))
    row = ledger.snapshot()["answer"]
    assert row["calls"] == 4 and row["seconds"] == pytest.approx(0.8, abs=0.15)
    assert 0.18 < row["wall_s"] < 0.45


async def test_sequential_calls_wall_time_is_their_sum_and_streams_count():
    ledger = Ledger()
    service = _service(ledger, limit=1)
    await asyncio.gather(*(service.chat([{"role": "user", "content": str(i)}]) for i in range(2)))
    pieces = [p async for p in service.stream([{"role": "user", "content": "s"}], role="summary")]
    snap = ledger.snapshot()
    assert pieces == ["ok"]
    assert snap["answer"]["wall_s"] == pytest.approx(snap["answer"]["seconds"], abs=0.05)
    assert snap["summary"]["calls"] == 1 and 0.18 < snap["summary"]["wall_s"] < 0.45


def test_a_call_in_flight_counts_in_the_snapshot():
    ledger = Ledger()
    ledger.begin("extract")
    time.sleep(0.05)
    during = ledger.snapshot()["extract"]["wall_s"]
    ledger.end("extract")
    assert during >= 0.05 and ledger.snapshot()["extract"]["wall_s"] >= during


async def test_stored_ledger_adds_wall_time_across_sessions(tmp_path):
    for _ in range(2):
        async with KGRag(settings(tmp_path / "idx"), chat=sleepy()) as rag:
            await rag.models.chat.chat([{"role": "user", "content": "x"}], use_cache=False)
    async with KGRag(settings(tmp_path / "idx")) as rag:
        stored = (await rag.status())["llm_all_time"]["answer"]
    assert stored["calls"] == 2 and 0.36 < stored["wall_s"] < 0.9


async def test_stored_ledger_from_before_wall_time_stays_without_it(tmp_path):
    async with KGRag(settings(tmp_path / "idx"), chat=sleepy()) as rag:
        await rag.storage.set_meta("ledger", {"answer": {"calls": 5, "seconds": 9.0}})
        await rag.models.chat.chat([{"role": "user", "content": "x"}], use_cache=False)
    async with KGRag(settings(tmp_path / "idx")) as rag:
        stored = (await rag.status())["llm_all_time"]["answer"]
    assert stored["calls"] == 6 and stored["seconds"] > 9.0 and "wall_s" not in stored
