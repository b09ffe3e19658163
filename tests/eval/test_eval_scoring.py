"""Exact match and F1 (SQuAD normalisation; characters for Chinese), and reading verdicts."""

from __future__ import annotations

import pytest

from kgrag.evaluation import exact_match, f1_score
from kgrag.evaluation.verdicts import correctness, pairwise


def test_english_answers_are_normalised_like_squad():
    assert exact_match("The Eiffel Tower!", ["eiffel tower"]) == 1.0
    assert exact_match("Eiffel", ["Eiffel Tower"]) == 0.0
    assert f1_score("the big Eiffel tower", ["Eiffel Tower"]) == pytest.approx(0.8)
    assert f1_score("Paris", ["London", "Paris, France"]) == pytest.approx(2 / 3)  # best gold
    assert f1_score("tower tower", ["tower"]) == pytest.approx(2 / 3)  # words counted, not sets
    assert f1_score("nothing alike", ["Eiffel Tower"]) == 0.0
    assert exact_match("anything", []) == 0.0 and f1_score("anything", []) == 0.0


def test_chinese_answers_are_scored_by_character():
    assert exact_match("踢爆。", ["踢爆"]) == 1.0  # full-width punctuation dropped
    assert f1_score("被踢爆了", ["踢爆"]) == pytest.approx(2 / 3)  # 2 of 4 chars, both of 2
    assert f1_score("40分钟内", ["40分钟"]) == pytest.approx(6 / 7)  # a digit run is one token
    assert f1_score("NPC玩家", ["玩家"]) == pytest.approx(0.8)  # a Latin run is one token
    assert exact_match("水枪", ["玩家以水枪"]) == 0.0


def test_a_verdict_is_read_from_fences_prose_and_any_key_case():
    reply = (
        "<think>A is longer.</think>Here you go:\n```json\n"
        '{"Comprehensiveness": {"Winner": "Answer 1", "Explanation": "more"},'
        ' "diversity": {"winner": "[Answer 2]"}, "EMPOWERMENT": "tie", "overall": {"winner": 1}}'
        "\n```"
    )
    got = pairwise(reply)
    assert {c: w for c, (w, _) in got.items()} == {
        "comprehensiveness": "1",
        "diversity": "2",
        "empowerment": "tie",
        "overall": "1",
    }
    assert got["comprehensiveness"][1] == "more"
    assert correctness('Sure. {"verdict": "Correct", "reason": "same name"}') == (
        "correct",
        "same name",
    )
    assert correctness("Incorrect: it names another city.")[0] == "incorrect"


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("Based on the context: > something", "no JSON object"),
        ('{"comprehensiveness": {"winner": "1"}}', "no verdict on diversity"),
        (
            '{"comprehensiveness": "3", "diversity": "1", "empowerment": "1", "overall": "1"}',
            "comprehensiveness: winner '3'",
        ),
    ],
)
def test_an_unreadable_verdict_says_why(reply, problem):
    with pytest.raises(ValueError, match=problem):
        pairwise(reply)


def test_an_unreadable_correctness_verdict_says_why():
    with pytest.raises(ValueError, match="verdict 'maybe'"):
        correctness('{"verdict": "maybe"}')
    with pytest.raises(ValueError, match="no JSON object"):
        correctness("Based on the context: it is Paris.")
