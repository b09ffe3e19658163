"""Gold files: the JSONL format, the shared sets' layouts told apart, one-line errors."""

from __future__ import annotations

import pytest

from kgrag.errors import ConfigError
from kgrag.evaluation import GoldOptions, answer_rows, read_gold
from kgrag.evaluation.datasets import load_dataset
from kgrag.evaluation.jsonl import passages_file
from tests.eval.eval_support import DATA


def test_jsonl_questions_with_answers_gold_and_passages(tmp_path):
    gold = tmp_path / "q.jsonl"
    gold.write_text(
        '{"question": "Who wrote it?", "answers": ["Dickens", "Charles Dickens"], "gold": ["a"]}\n'
        "\n"
        '{"question": " When? ", "answers": "1843", "id": "q2"}\n'
        '{"question": "Where?", "gold": ["b", "c"]}\n'
    )
    passages = tmp_path / "p.jsonl"
    passages.write_text('{"key": "a", "text": "Dickens wrote it."}\n{"key": "b", "text": "B."}\n')
    got = read_gold(gold, GoldOptions(passages=passages, limit=2, sliced=True))
    assert got.format == "jsonl" and [q.question for q in got.questions] == [
        "Who wrote it?",
        "When?",
    ]
    assert got.questions[0].answers == ("Dickens", "Charles Dickens")
    assert got.questions[0].gold == {"a"} and got.questions[1].gold == frozenset()
    assert got.questions[1].answers == ("1843",) and got.questions[1].id == "q2"
    assert got.passages == {"a": "Dickens wrote it."}  # sliced to the questions' gold
    as_map = tmp_path / "p.json"
    as_map.write_text('{\n "a": "A.",\n "b": "B."\n}\n')
    assert passages_file(as_map) == {"a": "A.", "b": "B."}
    assert read_gold(gold, GoldOptions(passages=tmp_path)).corpus_dir == tmp_path


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ('{"question": "Fine"}\n{"question": "Broken",\n', "q.jsonl:2: not valid JSON"),
        (
            '{"question": "Fine"}\n\n["a", "list"]\n',
            "q.jsonl:3: expected a JSON object, got a list",
        ),
        ('{"question": "Fine"}\n{"question": ""}\n', 'q.jsonl:2: "question" must be a non-empty'),
        (
            '{"question": "Fine", "gold": "ok"}\n{"question": "x", "gold": [1]}\n',
            'q.jsonl:2: "gold"',
        ),
        ('{"question": "Fine"}\n{"question": "x", "answers": {"a": 1}}\n', 'q.jsonl:2: "answers"'),
    ],
)
def test_a_bad_line_is_named(tmp_path, lines, message):
    gold = tmp_path / "q.jsonl"
    gold.write_text(lines)
    with pytest.raises(ConfigError, match=message) as caught:
        read_gold(gold)
    assert "\n" not in str(caught.value)


def test_answer_files_refuse_a_repeated_question(tmp_path):
    answers = tmp_path / "a.jsonl"
    answers.write_text('{"question": "Q1", "answer": "x"}\n{"question": "Q1", "answer": "y"}\n')
    with pytest.raises(ConfigError, match=r"a.jsonl:2: the question of line 1 again"):
        answer_rows(answers)
    answers.write_text('{"question": "Q1", "answer": 3}\n')
    with pytest.raises(ConfigError, match=r'a.jsonl:1: "answer" must be a string'):
        answer_rows(answers)


def test_the_shared_layouts_are_detected_and_read_like_the_script():
    for name, path in (
        ("hotpotqa", DATA / "hotpotqa" / "hotpotqa_train.json"),
        ("musique", DATA / "musique" / "musique_train.json"),
        ("squad", DATA / "zh" / "cmrc2018_trial.squad.json"),
    ):
        got = read_gold(path, GoldOptions(limit=4, sliced=True))
        same = load_dataset("cmrc" if name == "squad" else name, DATA, 4, sliced=True)
        assert got.format == name and got.questions == same.questions
        assert got.passages == same.passages and got.passages
        assert all(q.answers and q.gold <= set(got.passages) for q in got.questions)
    musique = read_gold(DATA / "musique" / "musique_train.json", GoldOptions(limit=1))
    assert musique.questions[0].answers == ("G. Stanley Hall", "Stanley Hall")  # aliases kept


def test_unknown_files_and_missing_corpora_are_one_line_errors(tmp_path):
    odd = tmp_path / "odd.json"
    odd.write_text('[{"prompt": "?"}]')
    with pytest.raises(ConfigError, match="not a gold file kgrag knows"):
        read_gold(odd)
    broken = tmp_path / "broken.json"
    broken.write_text('[\n {"question": "a",\n  "paragraphs": [}\n]')
    with pytest.raises(ConfigError, match=r"broken.json:3: not valid JSON"):
        read_gold(broken)
    musique = tmp_path / "m.json"
    musique.write_text((DATA / "musique" / "musique_train.json").read_text())
    with pytest.raises(ConfigError, match=r"m_corpus.json beside it, or --passages"):
        read_gold(musique)
    hotpot = tmp_path / "h.json"
    hotpot.write_text('[{"question": "q", "answer": "a", "supporting_facts": [["T", 0]]}]')
    with pytest.raises(ConfigError, match=r"h.json: item 1: missing 'context'"):
        read_gold(hotpot)
    with pytest.raises(ConfigError, match="no such file"):
        read_gold(tmp_path / "absent.jsonl")
