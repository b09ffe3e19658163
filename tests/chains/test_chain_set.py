"""The generated chain set is deterministic and well formed, and its evaluation runs."""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from dataclasses import asdict
from pathlib import Path
from types import ModuleType

import pytest

from tests.chains.generate import ChainItem, generate

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "eval_chains.py"


@pytest.fixture(scope="module")
def items() -> list[ChainItem]:
    return generate()


@functools.cache
def eval_chains() -> ModuleType:
    """``scripts/eval_chains.py``, loaded as a module."""
    spec = importlib.util.spec_from_file_location("eval_chains", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_same_seed_gives_the_same_set(items: list[ChainItem]) -> None:
    assert [asdict(i) for i in generate()] == [asdict(i) for i in items]
    assert [asdict(i) for i in generate(seed=7)] != [asdict(i) for i in items]


def test_at_least_fifty_two_and_three_hop_questions_in_both_languages(
    items: list[ChainItem],
) -> None:
    assert len(items) >= 50 and len({i.id for i in items}) == len(items)
    hops = {i.hops for i in items}
    assert hops == {2, 3}
    assert sum(i.lang == "en" for i in items) >= 50 and any(i.lang == "zh" for i in items)
    assert sum(i.hops == 3 for i in items) >= 20


def test_each_item_has_a_distractor_chain_of_the_same_relations(items: list[ChainItem]) -> None:
    for item in items:
        assert len(item.chain) == len(item.distractor) == len(item.relations) == item.hops
        assert item.anchor in item.question and item.anchor in item.chain[0]
        assert item.distractor_anchor not in item.question
        assert item.distractor_anchor in item.distractor[0]
        assert item.answer in item.final and item.answer not in item.question
        assert item.distractor_answer in item.distractor[-1]
        assert item.answer != item.distractor_answer


def test_every_hop_is_its_own_document(items: list[ChainItem]) -> None:
    for item in items:
        texts = dict(item.documents)
        assert sorted(texts) == sorted(
            [f"t{k}" for k in range(1, item.hops + 1)] + [f"d{k}" for k in range(1, item.hops + 1)]
        )
        for k, sentence in enumerate(item.chain, 1):
            assert texts[f"t{k}"].startswith(sentence)
        for k, sentence in enumerate(item.distractor, 1):
            assert texts[f"d{k}"].startswith(sentence)


def test_sentence_shapes_vary(items: list[ChainItem]) -> None:
    """Active, passive and appositive shapes all occur, so a hop is not found by its words."""
    english = [s for i in items if i.lang == "en" for s in (*i.chain, *i.distractor)]
    assert any(" was founded by " in s for s in english)
    assert any(re.search(r", the founder of ", s) for s in english)
    assert any(" founded " in s and " was founded" not in s for s in english)
    assert any(", acquired by " in s for s in english)
    assert any(s.startswith("The chief executive officer of ") for s in english)


def test_the_evaluation_runs_on_three_items(tmp_path: Path) -> None:
    out = tmp_path / "chains.json"
    report = eval_chains().main(["--limit", "3", "--modes", "path,naive", "--out", str(out)])
    assert out.exists()
    modes = report["modes"]
    assert set(modes) == {"path", "naive"}
    for figures in modes.values():
        assert figures["items"] == 3
        assert 0.0 <= figures["final_first"] <= figures["final_quoted"] <= 1.0
    assert len(report["items"]) == 3 and all(row["path"] for row in report["items"])


def test_judging_an_answer() -> None:
    module = eval_chains()
    item = generate(count=1, chinese=False)[0]
    refs = "### References\n[3] t2.txt\n[4] d2.txt\n[5] d1.txt"
    answer = f'1. "{item.final}" [3]\n2. "{item.distractor[-1]}" [4]\n3. "Filler." [5]\n\n{refs}'
    outcome = module.judge(item, answer, [item.final])
    assert outcome.order == ["t2", "d2", "~d1"]
    assert outcome.final_first and outcome.final_in_context and outcome.distractor_end
    swapped = f'1. "{item.distractor[-1]}" [4]\n2. "{item.final}" [3]\n\n{refs}'
    assert not module.judge(item, swapped, []).final_first
