"""Orderings a server store brings that the embedded one never showed.

On PostgreSQL a read may return after a commit of another task it did not
see, and concurrent steps finish in another order than on SQLite. These
tests stage such orderings without a server, deterministically.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kgrag.llm.cache import LLMCache, MemoryKV
from kgrag.llm.ledger import Ledger
from kgrag.llm.limiter import PriorityLimiter
from kgrag.llm.service import ChatService
from kgrag.retrieval.trace import Trace
from tests.support.chat import ScriptedChat, msgs


class StaleReads(MemoryKV):
    """A key-value store whose reads see the rows of when they began, and return later."""

    async def get(self, key: str) -> dict[str, Any] | None:
        seen = self.data.get(key)
        await asyncio.sleep(0.05)
        return seen


async def test_identical_requests_share_one_call_when_cache_reads_are_slow():
    provider = ScriptedChat()
    service = ChatService(
        provider, cache=LLMCache(StaleReads()), limiter=PriorityLimiter(4), ledger=Ledger()
    )

    async def later() -> Any:
        await asyncio.sleep(0.01)  # starts while the first one reads the cache
        return await service.chat(msgs("the same question"), role="extract")

    first, second = await asyncio.gather(
        service.chat(msgs("the same question"), role="extract"), later()
    )
    assert len(provider.calls) == 1
    assert first.text == second.text and second.cached
    assert service.ledger.snapshot()["extract"]["cache_hits"] == 1


def test_the_trace_lists_concurrent_routes_in_one_order_whichever_finished_first():
    def trace(order: list[str]) -> dict[str, Any]:
        t = Trace()
        for route in order:
            t.candidates(route, "chunk", [{"id": route, "score": 1.0}])
            t.drop("retrieval", "chunk", f"{route}-lost", "below cosine_threshold", 0.1, route)
        return t.to_dict()

    routes = ["ppr/chunks/dense", "ppr/lexical", "path/seeds", "path", "chunks", "lexical"]
    assert trace(routes) == trace(routes[::-1]) == trace(routes[2:] + routes[:2])
