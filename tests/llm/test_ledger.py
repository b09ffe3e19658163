"""The cost ledger's sums."""

from __future__ import annotations

import pytest

from kgrag.llm.ledger import Ledger


def test_sums_per_role_and_totals() -> None:
    ledger = Ledger()
    ledger.record("extract", prompt_tokens=100, completion_tokens=20, seconds=0.5)
    ledger.record("extract", prompt_tokens=50, completion_tokens=10, seconds=0.25, error=True)
    ledger.record("summary", prompt_tokens=7, completion_tokens=3, seconds=0.1)
    ledger.record_hit("summary")
    ledger.record_hit("keywords")
    snap = ledger.snapshot()
    assert snap["extract"] == {
        "calls": 2,
        "cache_hits": 0,
        "prompt_tokens": 150,
        "completion_tokens": 30,
        "seconds": 0.75,
        "errors": 1,
        "wall_s": 0.0,  # bare records: no start time, no wall time
    }
    assert snap["summary"]["cache_hits"] == 1 and snap["keywords"]["calls"] == 0
    totals = ledger.totals()
    assert totals["calls"] == 3 and totals["cache_hits"] == 2
    assert totals["prompt_tokens"] == 157 and totals["completion_tokens"] == 33
    assert totals["seconds"] == pytest.approx(0.85) and totals["errors"] == 1


def test_timed_records_success_error_and_cancellation() -> None:
    ledger = Ledger()
    with ledger.timed("answer") as usage:
        usage["prompt_tokens"] = 4
    with pytest.raises(ValueError):
        with ledger.timed("answer"):
            raise ValueError
    with pytest.raises(KeyboardInterrupt):
        with ledger.timed("answer"):
            raise KeyboardInterrupt
    snap = ledger.snapshot()["answer"]
    assert (snap["calls"], snap["errors"], snap["prompt_tokens"]) == (3, 1, 4)
    assert snap["seconds"] >= 0


def test_snapshot_is_a_copy_and_reset_clears() -> None:
    ledger = Ledger()
    ledger.record("embed", prompt_tokens=1)
    ledger.snapshot()["embed"]["calls"] = 99
    assert ledger.snapshot()["embed"]["calls"] == 1
    ledger.reset()
    assert ledger.snapshot() == {} and ledger.totals()["calls"] == 0
