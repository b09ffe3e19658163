"""The qualifier suite (tests/evidence/data/qualifiers.jsonl) and scripts/eval_qualifiers.py.

The suite is written by hand: groups of one-sentence documents about one
object that differ only in a qualifier, and questions that name the
statement that applies or the values no statement covers. These tests keep
it well-formed and keep the script running (on three questions); the
figures themselves are in docs/conditions.md.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUITE = Path(__file__).resolve().parent / "data" / "qualifiers.jsonl"
CJK = re.compile(r"[\u4e00-\u9fff]")


def load_script():
    spec = importlib.util.spec_from_file_location(
        "eval_qualifiers", ROOT / "scripts" / "eval_qualifiers.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_qualifiers"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def rows():
    return [json.loads(line) for line in SUITE.read_text(encoding="utf-8").splitlines() if line]


def test_every_question_has_an_applicable_statement_or_an_uncovered_value():
    for group in rows():
        statements = {d["id"] for d in group["docs"] if d.get("qualifiers")}
        assert len(statements) >= 2, group["group"]  # the statement and a sibling at least
        assert len({d["id"] for d in group["docs"]}) == len(group["docs"])
        for q in group["questions"]:
            assert q["applies"] is not None or q["uncovered"], q["question"]
            assert q["applies"] is None or q["applies"] in statements, q["question"]
            assert all(v.strip() for v in q["uncovered"]) and q["kinds"], q["question"]


def test_the_suite_is_large_and_varied_enough():
    groups = rows()
    questions = [(g, q) for g in groups for q in g["questions"]]
    assert len(questions) >= 80
    assert len({g["kind"] for g in groups}) >= 10
    chinese = [q for g, q in questions if g["lang"] == "zh"]
    assert len(chinese) >= 20 and all(CJK.search(q["question"]) for q in chinese)
    shapes = Counter(
        "two" if len(q["kinds"]) > 1 else "uncovered" if q["applies"] is None else "applies"
        for _, q in questions
    )
    assert shapes["two"] >= 10 and shapes["uncovered"] >= 10 and shapes["applies"] >= 30


def test_a_note_is_right_only_when_each_of_its_sentences_names_an_uncovered_value():
    ev = load_script()
    wrong = "The sources describe P-200 for FW-B only, not for FW-A. Nothing covers 2021."
    assert not ev.note_is_right(wrong, ["2021"])
    assert ev.note_is_right("Nothing in the sources covers 2021.", ["2021"])
    assert ev.note_is_right("资料中没有关于2021年的内容。", ["2021"])
    assert not ev.note_is_right("", ["2021"])


def test_the_script_runs_on_three_questions(tmp_path):
    ev = load_script()
    out = tmp_path / "figures.json"
    summary = ev.main(["--limit", "1", "--questions", "3", "--out", str(out)])
    answers = json.loads(out.read_text(encoding="utf-8"))["answers"]
    assert len(answers) == 6 and not any(a["error"] for a in answers)  # 3 questions, 2 paths
    for path in ("offline", "fake"):
        overall = summary[path]["overall"]
        assert overall["questions"] == 3 and overall["errors"] == 0
        assert overall["with_applicable"] == 2 and overall["notes_expected"] == 1
