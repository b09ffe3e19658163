"""Pairwise comparison of two sets of answers by a judge model (the LightRAG paper's method).

For each question both sets answer, the judge sees the two answers twice,
once in each order, and names the better one on comprehensiveness,
diversity, empowerment and overall. A's score on a criterion is the mean
over the two orders (1 won, 0.5 tie, 0 lost), so a judge that favours the
answer shown first gains neither side; the win rates average those scores
over the questions. A question where either order got no readable verdict
is left out of the win rates and listed with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kgrag.errors import ConfigError
from kgrag.evaluation import verdicts
from kgrag.evaluation.costs import Cost, CostMeter, CostSummary
from kgrag.evaluation.jsonl import AnswerRow
from kgrag.evaluation.judge import Judge
from kgrag.evaluation.progress import NullProgress, Progress
from kgrag.evaluation.prompts import pairwise_messages
from kgrag.evaluation.reports import CompareReport, OrderVerdict, PairJudgement

if TYPE_CHECKING:
    from kgrag.api.facade import KGRag
    from kgrag.llm.service import ChatService
    from kgrag.retrieval.param import QueryParam

_OTHER = {"A": "B", "B": "A"}


def pair_up(a: Sequence[AnswerRow], b: Sequence[AnswerRow]) -> list[PairJudgement]:
    """The questions both sets answer, in A's order, each with both answers."""
    answers_b = {row.question: row.answer for row in b}
    return [
        PairJudgement(row.question, row.answer, answers_b[row.question])
        for row in a
        if row.question in answers_b
    ]


async def compare_answers(
    chat: ChatService,
    a: Sequence[AnswerRow],
    b: Sequence[AnswerRow],
    *,
    labels: dict[str, str] | None = None,
    progress: Progress | None = None,
) -> CompareReport:
    """The judge ``chat``'s pairwise verdicts on the answers ``a`` and ``b`` share a question for."""
    pairs = pair_up(a, b)
    if not pairs:
        raise ConfigError("no question is answered in both sets; nothing to compare")
    judge = Judge(chat)
    report = CompareReport(labels or {"A": "A", "B": "B"}, judge.identity, pairs)
    report.unpaired = {"A": len(a) - len(pairs), "B": len(b) - len(pairs)}
    meter, costs = CostMeter(judge.ledger), list[Cost]()
    bar = progress or NullProgress()
    bar.start(len(pairs), "compare")
    try:
        for n, pair in enumerate(pairs, start=1):
            with meter.measure() as cost:
                pair.orders = [await _order(judge, pair, "A"), await _order(judge, pair, "B")]
            pair.cost = cost.total
            costs.append(cost)
            bar.advance(f"{n}/{len(pairs)}")
    finally:
        bar.stop()
    report.cost = CostSummary.of(costs)
    return report


async def _order(judge: Judge, pair: PairJudgement, first: str) -> OrderVerdict:
    """The judge's verdict with the answer labelled ``first`` shown as answer 1."""
    shown = (pair.answer_a, pair.answer_b) if first == "A" else (pair.answer_b, pair.answer_a)
    verdict = await judge.ask(pairwise_messages(pair.question, *shown), verdicts.pairwise)
    if verdict.value is None:
        return OrderVerdict(first, error=verdict.error, attempts=verdict.attempts)
    label = {"1": first, "2": _OTHER[first], "tie": "tie"}
    return OrderVerdict(
        first,
        winners={c: label[w] for c, (w, _) in verdict.value.items()},
        reasons={c: reason for c, (_, reason) in verdict.value.items()},
        attempts=verdict.attempts,
    )


async def generate_answers(
    rag: KGRag,
    questions: Sequence[str],
    param: QueryParam | None = None,
    *,
    progress: Progress | None = None,
) -> tuple[list[AnswerRow], CostSummary]:
    """``rag``'s answer to each question (``param``: how to ask), and what they cost."""
    meter, costs, rows = CostMeter(rag.models.ledger), list[Cost](), list[AnswerRow]()
    bar = progress or NullProgress()
    bar.start(len(questions), "answering")
    try:
        for question in questions:
            with meter.measure() as cost:
                result = await rag.query(question, param)
            rows.append(AnswerRow(question, result.answer))
            costs.append(cost)
            bar.advance(f"{len(rows)}/{len(questions)}")
    finally:
        bar.stop()
    return rows, CostSummary.of(costs)
