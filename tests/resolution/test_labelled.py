"""The labelled set (docs/resolution.md): the targets without an LLM, and the judge's mechanics."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kgrag.curation.resolution import Options
from kgrag.curation.resolution.evaluate import evaluate, load_fixture, merge

DATA = Path(__file__).parent / "data"
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from eval_dedupe import fake_chat  # noqa: E402  (the script's judge set-up, not a copy)

FIXTURES = sorted(DATA.glob("*.json"))


async def scores(**kw):
    return merge([await evaluate(*load_fixture(p), Options(min_score=0.6), **kw) for p in FIXTURES])


def test_the_set_is_large_enough():
    pairs = [p for f in FIXTURES for p in load_fixture(f)[1]]
    assert sum(p["label"] == "same" for p in pairs) >= 200
    assert sum(p["label"] == "different" for p in pairs) >= 200
    corpora = {"christmas_carol", "hotpotqa", "musique", "sanguoyanyi"}
    assert {f.stem for f in FIXTURES} == corpora | {
        f"real_{c}" for c in ("hotpotqa", "musique", "cmrc")
    }


async def test_precision_and_recall_without_an_llm():
    total = (await scores()).total
    assert total.precision is not None and total.precision >= 0.95
    assert total.recall is not None and total.recall >= 0.80


@pytest.mark.parametrize("kind", ["family member", "numbered variant", "shared surname"])
async def test_hard_negatives_stay_apart(kind):
    tally = (await scores()).by_type[kind]
    assert tally.different >= 50 and tally.joined / tally.different <= 0.02


async def test_llm_judgements_are_cached_and_counted():
    chat = fake_chat()
    view, pairs = load_fixture(DATA / "christmas_carol.json")
    await evaluate(view, pairs, Options(), chat=chat)
    first = chat.ledger.snapshot()["resolve"]
    assert first["calls"] > 0 and first["cache_hits"] == 0
    await evaluate(view, pairs, Options(), chat=chat)
    second = chat.ledger.snapshot()["resolve"]
    assert second["calls"] == first["calls"] and second["cache_hits"] == first["calls"]
