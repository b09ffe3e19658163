"""The typed reports of ``kgrag eval``: recall, answer accuracy and pairwise comparison.

Each has ``to_dict()`` (the JSON report) and ``to_markdown()`` (the
Markdown one, :mod:`kgrag.evaluation.markdown`). Percentages are rounded
to one decimal; ``meta`` holds what the caller wants on record (the gold
file, the workdir, the settings).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TypedDict

from kgrag.evaluation.costs import Cost, CostSummary, Counts

CRITERIA = ("comprehensiveness", "diversity", "empowerment", "overall")


def percent(values: list[float]) -> float:
    """The mean of ``values`` (shares in [0, 1]) in percent, one decimal; 0 for none."""
    total = 0.0
    for v in values:
        total += v
    return round(100 * total / max(len(values), 1), 1)


# -- recall --------------------------------------------------------------------------


@dataclass(slots=True)
class QuestionRecall:
    question: str
    gold: list[str]
    top: list[str]  # the first max(k) distinct passages retrieved
    recall: dict[int, float]  # k -> share of the gold among the first k


@dataclass(slots=True)
class ModeRecall:
    mode: str
    questions: list[QuestionRecall]
    cost: CostSummary
    seconds: float = 0.0

    @classmethod
    def of(
        cls, mode: str, rows: list[QuestionRecall], costs: list[Cost], seconds: float
    ) -> ModeRecall:
        return cls(mode, rows, CostSummary.of(costs), seconds)

    def recall_at(self, k: int) -> float:
        """Mean recall@k over the questions, in percent."""
        return percent([q.recall[k] for q in self.questions])

    def to_dict(self, ks: tuple[int, ...]) -> dict[str, object]:
        return {
            **{f"recall@{k}": self.recall_at(k) for k in ks},
            "s_per_query": round(self.seconds / max(len(self.questions), 1), 3),
            "cost": self.cost.to_dict(),
            "questions": [asdict(q) for q in self.questions],
        }


@dataclass(slots=True)
class RecallReport:
    ks: tuple[int, ...]
    questions: int
    modes: dict[str, ModeRecall] = field(default_factory=dict)
    no_gold: int = 0  # questions without a gold passage (they count 0)
    unknown_gold: list[str] = field(default_factory=list)  # gold keys no document carries
    meta: dict[str, object] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": "recall",
            "meta": self.meta,
            "questions": self.questions,
            "ks": list(self.ks),
            "no_gold": self.no_gold,
            "unknown_gold": self.unknown_gold,
            "modes": {m: r.to_dict(self.ks) for m, r in self.modes.items()},
        }

    def to_markdown(self) -> str:
        from kgrag.evaluation.markdown import recall_markdown

        return recall_markdown(self)


# -- answers -------------------------------------------------------------------------


@dataclass(slots=True)
class AnswerScore:
    question: str
    answers: list[str]  # the gold answers
    answer: str  # the index's answer
    exact: float  # 1.0 when it matches a gold answer after normalisation
    f1: float
    verdict: str | None = None  # the judge's: "correct" / "incorrect"; None: not judged
    judge_error: str | None = None  # why the judge's reply could not be used
    extractive: bool = False  # assembled from the context, no chat model wrote it
    cost: Counts = field(default_factory=dict)


class AnswersSummary(TypedDict):
    """One mode's answer figures (the head of its entry in the JSON report)."""

    exact_match: float
    f1: float
    judge_accuracy: float | None  # None: nothing judged
    judged: int
    judge_failures: int
    extractive: int


@dataclass(slots=True)
class ModeAnswers:
    mode: str
    questions: list[AnswerScore]
    cost: CostSummary
    judge_cost: CostSummary

    @property
    def judged(self) -> list[AnswerScore]:
        return [q for q in self.questions if q.verdict is not None]

    @property
    def judge_failures(self) -> int:
        return sum(q.judge_error is not None for q in self.questions)

    def summary(self) -> AnswersSummary:
        judged = self.judged
        return {
            "exact_match": percent([q.exact for q in self.questions]),
            "f1": percent([q.f1 for q in self.questions]),
            "judge_accuracy": (
                percent([q.verdict == "correct" for q in judged]) if judged else None
            ),
            "judged": len(judged),
            "judge_failures": self.judge_failures,
            "extractive": sum(q.extractive for q in self.questions),
        }

    def to_dict(self) -> dict[str, object]:
        return {
            **self.summary(),
            "cost": self.cost.to_dict(),
            "judge_cost": self.judge_cost.to_dict(),
            "questions": [asdict(q) for q in self.questions],
        }


@dataclass(slots=True)
class AnswersReport:
    questions: int
    judge: str | None  # the judge model's identity; None: no judge
    modes: dict[str, ModeAnswers] = field(default_factory=dict)
    without_answers: int = 0  # questions of the file left out: no gold answer
    meta: dict[str, object] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": "answers",
            "meta": self.meta,
            "questions": self.questions,
            "without_answers": self.without_answers,
            "judge": self.judge,
            "modes": {m: r.to_dict() for m, r in self.modes.items()},
        }

    def to_markdown(self) -> str:
        from kgrag.evaluation.markdown import answers_markdown

        return answers_markdown(self)


# -- pairwise comparison ----------------------------------------------------------------


@dataclass(slots=True)
class OrderVerdict:
    """The judge's reply with one answer shown first: criterion -> "A", "B" or "tie"."""

    first: str  # the label shown as answer 1
    winners: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    error: str | None = None  # why no reply could be used (after the retries)
    attempts: int = 0


@dataclass(slots=True)
class PairJudgement:
    question: str
    answer_a: str
    answer_b: str
    orders: list[OrderVerdict] = field(default_factory=list)
    cost: Counts = field(default_factory=dict)

    @property
    def error(self) -> str | None:
        """Why this question is left out of the win rates (an order without a usable reply)."""
        return next((f"{o.first} first: {o.error}" for o in self.orders if o.error), None)

    def score_a(self, criterion: str) -> float:
        """A's score on ``criterion``, averaged over both orders: 1 won, 0.5 tie, 0 lost."""
        points = {"A": 1.0, "tie": 0.5, "B": 0.0}
        return sum(points[o.winners[criterion]] for o in self.orders) / len(self.orders)

    def consistent(self, criterion: str) -> bool:
        """Whether both orders named the same winner (no position bias on this one)."""
        return len({o.winners[criterion] for o in self.orders}) == 1


@dataclass(slots=True)
class CompareReport:
    labels: dict[str, str]  # "A" / "B" -> what they are (a file, a configuration)
    judge: str
    pairs: list[PairJudgement] = field(default_factory=list)
    unpaired: dict[str, int] = field(default_factory=dict)  # label -> questions the other lacks
    cost: CostSummary = field(default_factory=CostSummary)
    answer_costs: dict[str, CostSummary] = field(default_factory=dict)
    meta: dict[str, object] = field(default_factory=dict)

    @property
    def judged(self) -> list[PairJudgement]:
        return [p for p in self.pairs if p.error is None]

    def win_rates(self) -> dict[str, dict[str, float | None]]:
        """Criterion -> {"A": %, "B": %} over the judged questions (ties split evenly).

        None when no question was judged: no verdict is no score.
        """
        judged = self.judged
        out: dict[str, dict[str, float | None]] = {}
        for c in CRITERIA:
            a = percent([p.score_a(c) for p in judged]) if judged else None
            out[c] = {"A": a, "B": None if a is None else round(100 - a, 1)}
        return out

    def agreement(self) -> dict[str, float | None]:
        """Criterion -> % of judged questions where both orders named the same winner."""
        judged = self.judged
        return {
            c: percent([float(p.consistent(c)) for p in judged]) if judged else None
            for c in CRITERIA
        }

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": "compare",
            "meta": self.meta,
            "labels": self.labels,
            "judge": self.judge,
            "questions": len(self.pairs),
            "judged": len(self.judged),
            "failed": [{"question": p.question, "error": p.error} for p in self.pairs if p.error],
            "unpaired": self.unpaired,
            "win_rates": self.win_rates(),
            "order_agreement": self.agreement(),
            "judge_cost": self.cost.to_dict(),
            "answer_costs": {k: v.to_dict() for k, v in self.answer_costs.items()},
            "pairs": [asdict(p) for p in self.pairs],
        }

    def to_markdown(self) -> str:
        from kgrag.evaluation.markdown import compare_markdown

        return compare_markdown(self)
