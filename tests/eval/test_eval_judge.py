"""The judge: answer accuracy and pairwise comparison, with a judge function and the fake LLM."""

from __future__ import annotations

import json
import re

from kgrag import KGRag
from kgrag.evaluation import AnswerRow, GoldQuestion, compare_answers, evaluate_answers
from kgrag.evaluation.prompts import CORRECTNESS_SYSTEM, PAIRWISE_SYSTEM
from tests.eval.eval_support import OFFLINE
from tests.support.settings import fake_settings

FENCED = re.compile(r"(?:^|\n)([^\n]+):\n(`{3,})\n(.*?)\n\2", re.S)


def blocks(prompt: str) -> dict[str, str]:
    """The fenced blocks of a judge prompt, by the line before each."""
    return {label: text for label, _, text in FENCED.findall(prompt)}


class Judge:
    """A judge function: prefers the longer answer, and is biased in a known way.

    comprehensiveness and overall: the longer answer; diversity: always the
    one shown first; empowerment: a tie. ``garble`` questions get an
    unreadable first reply (then a good one when asked again; with
    ``again``, an unreadable one again).
    """

    def __init__(self, garble: tuple[str, ...] = (), again: bool = False):
        self.prompts: list[dict[str, str]] = []
        self.garble, self.again = garble, again

    def unreadable(self, seen: dict[str, str], asked_again: bool) -> bool:
        return seen["Question"] in self.garble and (self.again or not asked_again)

    async def __call__(self, prompt, system_prompt=None, history_messages=None, **kw):
        if system_prompt == CORRECTNESS_SYSTEM:
            seen = blocks(prompt if not history_messages else history_messages[0]["content"])
            if self.unreadable(seen, bool(history_messages)):
                return "Hard to say."
            refs = seen["Reference answers, one a line"].splitlines()
            ok = any(r.lower() in seen["Candidate answer"].lower() for r in refs)
            return json.dumps({"verdict": "correct" if ok else "incorrect", "reason": "."})
        if system_prompt != PAIRWISE_SYSTEM:  # the index answering a question
            return "Paris is the capital." if "France" in prompt else "I cannot tell."
        seen = blocks(prompt) if not history_messages else blocks(history_messages[0]["content"])
        self.prompts.append(seen)
        if self.unreadable(seen, bool(history_messages)):
            return "Both answers have merit."
        longer = "1" if len(seen["Answer 1"]) >= len(seen["Answer 2"]) else "2"
        verdict = {"comprehensiveness": longer, "diversity": "1", "empowerment": "tie"}
        return json.dumps(
            {k: {"winner": v, "reason": "."} for k, v in verdict.items()}
            | {"overall": {"winner": f"Answer {longer}", "reason": "."}}
        )


def settings(tmp_path):
    return fake_settings(tmp_path / "idx", extractor="nlp")


async def test_both_orders_are_asked_and_averaged(tmp_path):
    judge = Judge(garble=("Q2",))
    a = [AnswerRow(f"Q{i}", f"A long and detailed answer {i}") for i in range(1, 4)]
    b = [AnswerRow(f"Q{i}", f"short {i}") for i in range(1, 4)] + [AnswerRow("Q9", "alone")]
    async with KGRag(settings(tmp_path), chat=judge) as rag:
        report = await compare_answers(rag.models.chat, a, b)
        asked = len(judge.prompts)
        again = await compare_answers(rag.models.chat, a, b)
    # every question twice, A first then B first; Q2 once more after its unreadable reply
    firsts = [(p["Question"], p["Answer 1"][0]) for p in judge.prompts]
    assert firsts[:asked] == [
        ("Q1", "A"), ("Q1", "s"), ("Q2", "A"), ("Q2", "A"), ("Q2", "s"), ("Q2", "s"), ("Q3", "A"),
        ("Q3", "s"),
    ]  # fmt: skip
    assert report.cost.total["calls"] == 8
    # readable replies come from the cache; the unreadable ones were never stored
    assert firsts[asked:] == [("Q2", "A"), ("Q2", "s")]
    assert again.cost.total["calls"] == 2 and again.cost.total["cache_hits"] == 6
    assert report.unpaired == {"A": 0, "B": 1} and len(report.judged) == 3
    assert [o.attempts for o in report.pairs[1].orders] == [2, 2]
    rates = report.win_rates()
    assert rates["comprehensiveness"] == {"A": 100.0, "B": 0.0} == rates["overall"]
    assert rates["diversity"] == {"A": 50.0, "B": 50.0}  # the position bias cancels out
    assert rates["empowerment"] == {"A": 50.0, "B": 50.0}
    assert report.agreement()["diversity"] == 0.0 and report.agreement()["overall"] == 100.0
    assert again.to_dict()["win_rates"] == report.to_dict()["win_rates"]


async def test_answers_are_scored_and_judged(tmp_path):
    questions = [
        GoldQuestion("What is the capital of France?", answers=("Paris",)),
        GoldQuestion("Who wrote Hamlet?", answers=("William Shakespeare",)),
        GoldQuestion("No gold answer here?"),
    ]
    async with KGRag(settings(tmp_path), chat=Judge()) as rag:
        await rag.insert(["Paris is the capital of France.", "Hamlet is a play."], ["a", "b"])
        report = await evaluate_answers(rag, questions, ["naive"])
    mode = report.modes["naive"]
    assert report.without_answers == 1 and report.judge and len(mode.questions) == 2
    assert [q.verdict for q in mode.questions] == ["correct", "incorrect"]
    assert mode.summary()["exact_match"] == 0.0  # "Paris is the capital." is not "Paris"
    assert mode.summary()["f1"] == 25.0  # "paris" of 3 words (the article goes): 0.5; then 0
    assert mode.summary()["judge_accuracy"] == 50.0
    assert mode.cost.per_answer["calls"] >= 1 and mode.judge_cost.per_answer["calls"] == 1


async def test_unreadable_verdicts_are_reported_and_never_cached(tmp_path):
    judge = Judge(garble=("Q0", "Q1", "Q2", "What is the capital of France?"), again=True)
    a = [AnswerRow(f"Q{i}", f"yes {i}") for i in range(3)]
    b = [AnswerRow(f"Q{i}", f"no {i}") for i in range(3)]
    gold = [GoldQuestion("What is the capital of France?", answers=("Paris",))]
    async with KGRag(settings(tmp_path), chat=judge) as rag:
        report = await compare_answers(rag.models.chat, a, b)
        again = await compare_answers(rag.models.chat, a, b)
        await rag.insert(["Paris is the capital of France."], ["a"])
        answers = await evaluate_answers(rag, gold, ["naive"])
    # 3 questions x 2 orders x 2 attempts, none counted, none stored
    assert report.cost.total["calls"] == 12 == again.cost.total["calls"]
    assert again.cost.total.get("cache_hits", 0) == 0
    data = report.to_dict()
    assert data["judged"] == 0 and len(data["failed"]) == 3
    assert all(
        "no JSON object" in f["error"] and "asked 2 times" in f["error"] for f in data["failed"]
    )
    assert data["win_rates"]["overall"] == {"A": None, "B": None}
    assert [o["first"] for o in data["pairs"][0]["orders"]] == ["A", "B"]
    markdown = report.to_markdown()
    assert "3 judgement(s) failed (not counted)" in markdown and "| overall | – | – |" in markdown
    naive = answers.modes["naive"].to_dict()
    assert naive["judged"] == 0 and naive["judge_failures"] == 1
    assert naive["judge_cost"]["total"]["calls"] == 2  # 1 answer x 2 attempts


def test_compare_with_the_fake_model_judges_every_question(kgrag, tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    rows = [  # (A, B): A says more; A repeats itself, B varies; nothing separates them
        ("Paris is the capital and the largest city of France", "Paris"),
        ("rain rain rain rain", "dry sunny day"),
        ("yes", "no"),
    ]
    a.write_text(
        "".join(
            json.dumps({"question": f"Q{i}", "answer": x}) + "\n" for i, (x, _) in enumerate(rows)
        )
    )
    b.write_text(
        "".join(
            json.dumps({"question": f"Q{i}", "answer": y}) + "\n" for i, (_, y) in enumerate(rows)
        )
    )
    fake = OFFLINE | {"KGRAG_LLM_PROVIDER": "fake"}
    out = kgrag("eval", "compare", a, b, "--json", "--report", tmp_path / "cmp", env=fake)
    assert out.code == 0, out.err
    data = json.loads(out.out)
    # 3 questions x 2 orders, every reply readable at once
    assert data["judge_cost"]["total"]["calls"] == 6
    assert data["judged"] == 3 and data["failed"] == []
    rates = data["win_rates"]
    assert rates["comprehensiveness"] == {"A": 83.3, "B": 16.7}  # Q0, Q1 and half of Q2
    assert rates["diversity"] == rates["empowerment"] == rates["overall"] == {"A": 50.0, "B": 50.0}
    assert (
        data["order_agreement"]["comprehensiveness"] == 66.7
    )  # Q2's tie goes to whichever is first
    assert [o["first"] for o in data["pairs"][0]["orders"]] == ["A", "B"]
    assert json.loads((tmp_path / "cmp.json").read_text()) == data
    assert "| comprehensiveness | 83.3 | 16.7 | 66.7 |" in (tmp_path / "cmp.md").read_text()
    rerun = kgrag("eval", "compare", a, b, "--json", env=fake)
    assert json.loads(rerun.out)["pairs"] == data["pairs"]  # deterministic


def test_compare_of_two_configurations_with_the_fake_model_is_cached(kgrag, tmp_path):
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        '{"question": "What is the capital of France?", "gold": ["fr"]}\n'
        '{"question": "Which river crosses Rome?", "gold": ["it"]}\n'
        '{"question": "Where does the Tiber rise?", "gold": ["it"]}\n'
    )
    passages = tmp_path / "passages.json"
    passages.write_text(
        '{"fr": "Paris is the capital of France. The Seine crosses Paris.", '
        '"it": "The Tiber crosses Rome. It rises on Mount Fumaiolo."}'
    )
    fake = OFFLINE | {"KGRAG_LLM_PROVIDER": "fake"}
    where = ["--workdir", tmp_path / "idx"]
    built = kgrag(
        "eval", "recall", gold, *where, "--passages", passages, "--index-passages", env=fake
    )
    assert built.code == 0, built.err
    configs = ["--config-a", "mode=naive", "--config-b", "mode=local,top_k=1,chunk_top_k=1"]
    first = kgrag("eval", "compare", *configs, gold, *where, "--json", env=fake)
    second = kgrag("eval", "compare", *configs, gold, *where, "--json", env=fake)
    assert first.code == 0 == second.code, first.err + second.err
    one, two = json.loads(first.out), json.loads(second.out)
    assert one["judged"] == 3 and one["judge_cost"]["total"]["calls"] == 6
    for criterion, rates in one["win_rates"].items():
        assert round(rates["A"] + rates["B"], 1) == 100.0, criterion
    assert two["win_rates"] == one["win_rates"]
    verdicts = [[o["winners"] for o in p["orders"]] for p in one["pairs"]]
    assert [[o["winners"] for o in p["orders"]] for p in two["pairs"]] == verdicts
    assert two["judge_cost"]["total"].get("calls", 0) == 0  # every verdict from the cache
    assert two["judge_cost"]["total"]["cache_hits"] == 6


def test_answers_command_scores_and_reports(kgrag, tmp_path):
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        '{"question": "What is the capital of France?", "answers": ["Paris"], "gold": ["fr"]}\n'
        '{"question": "Which river crosses Rome?", "answers": ["Tiber"], "gold": ["it"]}\n'
    )
    passages = tmp_path / "passages.json"
    passages.write_text(
        '{"fr": "Paris is the capital of France.", "it": "The Tiber crosses Rome."}'
    )
    fake = OFFLINE | {"KGRAG_LLM_PROVIDER": "fake"}
    common = ["--workdir", tmp_path / "idx", "--modes", "naive", "--passages", passages]
    built = kgrag("eval", "recall", gold, *common, "--index-passages", "--json", env=fake)
    assert built.code == 0, built.err
    assert json.loads(built.out)["modes"]["naive"]["recall@2"] == 100.0
    out = kgrag("eval", "answers", gold, *common, "--report", tmp_path / "ans", env=fake)
    assert out.code == 0, out.err
    data = json.loads((tmp_path / "ans.json").read_text())
    naive = data["modes"]["naive"]
    assert data["judge"] == "fake:fake" and naive["judged"] == 2 and naive["judge_failures"] == 0
    assert naive["extractive"] == 0 and naive["cost"]["per_answer"]["calls"] >= 1  # answer call
    assert naive["judge_cost"]["total"]["calls"] == 2  # 2 answers, each verdict read at once
    assert naive["judge_accuracy"] == 100.0  # the answers quote the passages naming Paris, Tiber
    assert out.out == (tmp_path / "ans.md").read_text() and "| naive |" in out.out
    plain = kgrag("eval", "answers", gold, *common, "--no-judge", "--json", env=fake)
    assert json.loads(plain.out)["judge"] is None
