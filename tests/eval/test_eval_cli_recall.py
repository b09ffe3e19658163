"""``kgrag eval recall`` on the in-repo sample agrees with scripts/eval_recall.py."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path

from tests.eval.eval_support import DATA, OFFLINE

ROOT = Path(__file__).resolve().parents[2]
HOTPOT = DATA / "hotpotqa" / "hotpotqa_train.json"
QUESTIONS = 5  # a slice: these questions' gold passages and distractors


def load_script():
    spec = importlib.util.spec_from_file_location(
        "eval_recall", ROOT / "scripts" / "eval_recall.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_recall"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def script_recall(workdir: Path) -> dict:
    argv = ["--datasets", "hotpotqa", "--questions", str(QUESTIONS), "--slice"]
    argv += ["--embedding", "fake", "--modes", "naive,ppr", "--workdir", str(workdir)]
    return asyncio.run(load_script().main([*argv, "--data", str(DATA)]))["hotpotqa"]


def test_recall_of_the_command_is_the_scripts(kgrag, tmp_path):
    script = script_recall(tmp_path / "script")
    assert script["modes"]["ppr"]["recall@5"] > 0  # something to agree on

    report = tmp_path / "reports" / "recall"
    args = ["eval", "recall", HOTPOT, "--limit", QUESTIONS, "--slice", "--modes", "naive,ppr"]
    fresh = kgrag(
        *args,
        "--index-passages",
        "--workdir",
        tmp_path / "cli",
        "--json",
        "--report",
        report,
        env=OFFLINE,
    )
    assert fresh.code == 0, fresh.err
    ours = json.loads(fresh.out)
    reused = kgrag(*args, "--workdir", script["workdir"], "--json", env=OFFLINE)
    assert reused.code == 0, reused.err
    for data in (ours, json.loads(reused.out)):
        assert data["questions"] == QUESTIONS and data["unknown_gold"] == []
        for mode in ("naive", "ppr"):
            for k in (2, 5):
                assert data["modes"][mode][f"recall@{k}"] == script["modes"][mode][f"recall@{k}"]
    assert json.loads(report.with_suffix(".json").read_text()) == ours
    markdown = report.with_suffix(".md").read_text()
    assert "| mode | R@2 | R@5 |" in markdown
    assert f"| ppr | {script['modes']['ppr']['recall@2']:.1f} |" in markdown


def test_gold_keys_name_documents_by_path_or_id(kgrag, tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "notes").mkdir(parents=True)
    (corpus / "notes" / "paris.txt").write_text("Paris is the capital of France.\n")
    (corpus / "rome.txt").write_text("Rome is the capital of Italy. The Tiber runs through it.\n")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        '{"question": "What is the capital of France?", "gold": ["notes/paris.txt"]}\n'
        "\n"
        '{"question": "Which river runs through Rome?", "gold": ["rome.txt", "atlantis.txt"]}\n'
    )
    out = kgrag(
        "eval",
        "recall",
        gold,
        "--passages",
        corpus,
        "--index-passages",
        "--modes",
        "naive",
        "--k",
        "1",
        "--workdir",
        tmp_path / "idx",
        "--json",
        env=OFFLINE,
    )
    assert out.code == 0, out.err
    data = json.loads(out.out)
    assert data["unknown_gold"] == ["atlantis.txt"]
    rows = data["modes"]["naive"]["questions"]
    assert rows[0]["top"] == ["notes/paris.txt"] and rows[0]["recall"]["1"] == 1.0
    assert rows[1]["top"] == ["rome.txt"] and rows[1]["recall"]["1"] == 0.5
    assert data["modes"]["naive"]["recall@1"] == 75.0


def test_recall_refuses_a_workdir_without_index_and_a_bad_mode(kgrag, tmp_path):
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"question": "Why?", "gold": ["a"]}\n')
    missing = kgrag("eval", "recall", gold, "--workdir", tmp_path / "none", env=OFFLINE)
    assert missing.code == 2 and "no index" in missing.err
    bad = kgrag("eval", "recall", gold, "--modes", "naive,fast", env=OFFLINE)
    assert bad.code == 2 and "unknown mode 'fast'" in bad.err
