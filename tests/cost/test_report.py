"""The cost report over the fake models: money, ``since``, old indexes, query costs."""

from __future__ import annotations

import pytest

from kgrag.api.facade import KGRag
from kgrag.indexing.costs import NAMESPACE
from tests.support.settings import fake_settings

from .helpers import CHAT, EMBED, QUESTION, corpus, day

FLAT = {CHAT: {"prompt": 2.0, "completion": 2.0}, EMBED: {"prompt": 2.0, "completion": 2.0}}
SPLIT = {"fake": [1.5, 6.0], EMBED: [0.25, 0]}  # the chat model by its bare name


async def _indexed_and_asked(rag: KGRag, tmp_path) -> None:
    await rag.index_paths(corpus(tmp_path))
    await rag.query(QUESTION, mode="local")
    await rag.query(QUESTION, mode="naive", user_prompt="Answer in one line.")


async def test_money_is_tokens_times_the_price(tmp_path):
    async with KGRag(fake_settings(tmp_path / "idx", prices=SPLIT)) as rag:
        await _indexed_and_asked(rag, tmp_path)
        report = await rag.cost_report()
    chat, embed = report.models[CHAT], report.models[EMBED]
    assert chat.prompt_tokens > 0 and chat.completion_tokens > 0 and embed.prompt_tokens > 0
    assert chat.usd == pytest.approx((chat.prompt_tokens * 1.5 + chat.completion_tokens * 6) / 1e6)
    assert embed.usd == pytest.approx(embed.prompt_tokens * 0.25 / 1e6)
    assert report.total.usd == pytest.approx(chat.usd + embed.usd)
    parts = [p.usd for p in report.parts.values()]
    assert report.total.usd == pytest.approx(sum(p for p in parts if p is not None))
    assert report.priced and report.unpriced == []


async def test_every_figure_is_priced_the_same_way(tmp_path):
    async with KGRag(fake_settings(tmp_path / "idx", prices=FLAT)) as rag:
        await _indexed_and_asked(rag, tmp_path)
        report = await rag.cost_report()
    figures = [report.total, *report.parts.values(), *report.operations.values()]
    figures += [d.cost for d in report.documents]
    for f in figures:
        assert f.usd == pytest.approx(f.tokens * 2.0 / 1e6)
    assert {"index", "query:local", "query:naive"} <= set(report.operations)


async def test_without_prices_money_is_not_known(tmp_path):
    async with KGRag(fake_settings(tmp_path / "idx")) as rag:
        await _indexed_and_asked(rag, tmp_path)
        unpriced = await rag.cost_report()
    assert not unpriced.priced and unpriced.total.usd is None
    assert unpriced.unpriced == [EMBED, CHAT]
    async with KGRag(fake_settings(tmp_path / "idx", prices={CHAT: [1, 1]})) as rag:
        partly = await rag.cost_report()
    assert partly.models[CHAT].usd is not None and partly.models[EMBED].usd is None
    assert partly.total.usd is None and partly.unpriced == [EMBED]


async def test_since_counts_from_that_day(tmp_path):
    async with KGRag(fake_settings(tmp_path / "idx")) as rag:
        rag.models.ledger.clock = lambda: day("2024-01-15")
        await rag.index_paths(corpus(tmp_path))
        rag.models.ledger.clock = lambda: day("2024-06-01")
        await rag.query(QUESTION, mode="local")
        everything = await rag.cost_report()
        later = await rag.cost_report(since="2024-03-01")
        after = await rag.cost_report(since="2024-06-02")
    assert everything.parts["initial index"].calls > 0
    assert later.since == "2024-03-01" and set(later.operations) == {"query:local"}
    assert later.parts["initial index"].calls == 0
    assert later.total.calls == everything.parts["queries"].calls > 0
    assert after.total.calls == 0 and after.operations == {} and after.documents == []


async def test_an_index_without_operation_rows_shows_earlier_costs(tmp_path):
    async with KGRag(fake_settings(tmp_path / "idx")) as rag:
        await rag.index_paths(corpus(tmp_path))
        before = await rag.cost_report()
        rows = rag.storage.kv(NAMESPACE)
        await rows.delete(await rows.keys())  # as an index written before the rows existed
    async with KGRag(fake_settings(tmp_path / "idx")) as rag:
        old = await rag.cost_report()
        await rag.query(QUESTION, mode="local")
        mixed = await rag.cost_report()
    assert old.operations == {} and old.earlier is not None
    assert (old.earlier.calls, old.earlier.prompt_tokens) == (
        before.total.calls,
        before.total.prompt_tokens,
    )
    assert old.total.calls == before.total.calls and "+ earlier" in old.formula
    assert mixed.earlier is not None and mixed.earlier.calls == before.total.calls
    assert mixed.total.calls == before.total.calls + mixed.operations["query:local"].calls


async def test_query_cost_is_the_ledger_delta(tmp_path):
    async with KGRag(fake_settings(tmp_path / "idx", prices=FLAT)) as rag:
        await rag.index_paths(corpus(tmp_path))
        ledger = rag.models.ledger
        before = ledger.totals()
        result = await rag.query(QUESTION, mode="local")
        middle = ledger.totals()
        stream = rag.stream(QUESTION, mode="local", user_prompt="Be brief.")
        pieces = [piece async for piece in stream]
        after = ledger.totals()
    for cost, start, end in ((result.cost, before, middle), (stream.result.cost, middle, after)):
        assert cost.calls == end["calls"] - start["calls"] > 0
        assert cost.cache_hits == end["cache_hits"] - start["cache_hits"]
        assert cost.prompt_tokens == end["prompt_tokens"] - start["prompt_tokens"]
        assert cost.completion_tokens == end["completion_tokens"] - start["completion_tokens"]
        assert cost.seconds == pytest.approx(end["seconds"] - start["seconds"])
        assert cost.usd == pytest.approx((cost.prompt_tokens + cost.completion_tokens) * 2 / 1e6)
    assert pieces and stream.result is not None


async def test_a_cached_answer_costs_no_call(tmp_path):
    async with KGRag(fake_settings(tmp_path / "idx")) as rag:
        await rag.index_paths(corpus(tmp_path))
        first = await rag.query(QUESTION, mode="local")
        again = await rag.query(QUESTION, mode="local")
    assert first.cost.calls > 0 and again.cached
    assert again.cost.cache_hits > 0 and again.cost.completion_tokens == 0
