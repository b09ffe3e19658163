"""The ledger's keys: operation, document and model come from the caller's context."""

from __future__ import annotations

import asyncio

from kgrag.llm.ledger import (
    OTHER,
    CallCost,
    CostKey,
    Ledger,
    Tally,
    document_context,
    labelled,
    money,
    operation,
    query_scope,
    scoped_steps,
    tallied,
    within,
)

from .helpers import day


def _by(ledger: Ledger, field: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for key, cost in ledger.entries().items():
        out[getattr(key, field)] = out.get(getattr(key, field), 0) + cost.calls
    return out


def test_calls_count_for_the_operation_in_force_and_the_model():
    ledger = Ledger(clock=lambda: day("2024-05-04"))
    ledger.record("extract", model="openai:gpt-4o@example.org", prompt_tokens=3)
    with operation("delete"):
        ledger.record("summary", model="openai:gpt-4o@example.org", completion_tokens=2)
        with operation("curate", unless_set=True):  # delete stays in force
            ledger.record_hit("summary", model="openai:gpt-4o")
    entries = ledger.entries()
    model = "openai:gpt-4o"  # the host is not the model
    assert entries == {
        CostKey("2024-05-04", OTHER, "", model, "extract"): CallCost(calls=1, prompt_tokens=3),
        CostKey("2024-05-04", "delete", "", model, "summary"): CallCost(
            calls=1, cache_hits=1, completion_tokens=2
        ),
    }
    assert ledger.snapshot()["summary"]["calls"] == 1  # the role totals stay as they were
    assert ledger.snapshot()["summary"]["cache_hits"] == 1


async def test_tasks_started_for_a_document_count_for_it():
    ledger = Ledger()

    async def extract() -> None:
        ledger.record("extract", model="m")

    with operation("index", updates=["doc-b"]):
        await asyncio.gather(
            asyncio.create_task(extract(), context=document_context("doc-a")),
            asyncio.create_task(extract(), context=document_context("doc-b")),
        )
        ledger.record("summary", model="m")
    found = {(k.operation, k.document) for k in ledger.entries()}
    assert found == {("index", "doc-a"), ("supersede", "doc-b"), ("index", "")}


async def test_concurrent_tallies_see_only_their_own_calls():
    ledger = Ledger()

    async def query(calls: int) -> Tally:
        with tallied() as tally:
            for _ in range(calls):
                await asyncio.sleep(0)
                ledger.record("answer", model="m", prompt_tokens=10)
        return tally

    one, two = await asyncio.gather(query(2), query(5))
    assert (one.total().calls, two.total().calls) == (2, 5)
    assert two.total().prompt_tokens == 50 and ledger.totals()["calls"] == 7


async def test_stream_steps_count_for_the_query_whoever_iterates():
    ledger = Ledger()

    async def pieces():
        for word in ("a", "b"):
            ledger.record("answer", model="m")
            yield word
        ledger.record("answer", model="m")  # the last step: the stream's own end

    tally = Tally()
    steps = scoped_steps(pieces(), query_scope("local", tally))
    got = [await asyncio.create_task(anext(steps))]  # another task takes a step
    got += [piece async for piece in steps]
    ledger.record("extract", model="m")  # after the stream: not the query's
    assert got == ["a", "b"] and tally.total().calls == 3
    assert _by(ledger, "operation") == {"query:local": 3, OTHER: 1}
    with within(query_scope("mix", Tally())):
        ledger.record("keywords", model="m")
    assert _by(ledger, "operation")["query:mix"] == 1


async def test_labelled_methods_keep_an_outer_operation():
    ledger = Ledger()

    @labelled("curate")
    async def merge() -> None:
        ledger.record("summary", model="m")

    await merge()
    with operation("dedupe"):
        await merge()
    assert _by(ledger, "operation") == {"curate": 1, "dedupe": 1}


def test_money_needs_a_price_for_every_model_that_used_tokens():
    costs = {"openai:a": CallCost(calls=1, prompt_tokens=2_000_000, completion_tokens=1_000_000)}
    assert money(costs, {}) is None
    assert money(costs, {"a": {"prompt": 1.0, "completion": 4.0}}) == 6.0
    assert money(costs, {"openai:a": {"prompt": 0.5, "completion": 0.0}}) == 1.0
    costs["local:b"] = CallCost(calls=3, prompt_tokens=7)
    assert money(costs, {"a": {"prompt": 1.0, "completion": 4.0}}) is None
    costs["local:b"] = CallCost(cache_hits=3)  # no tokens: no price needed
    assert money(costs, {"a": {"prompt": 1.0, "completion": 4.0}}) == 6.0
