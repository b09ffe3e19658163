"""Answer accuracy: the index's answers against the gold answers.

Every question with gold answers is asked in each mode (``KGRag.query``);
the answer is scored by exact match and token F1 (:mod:`kgrag.evaluation.scoring`)
and, when a chat model is configured, by the judge (correct or incorrect,
:func:`kgrag.evaluation.prompts.correctness_messages`). Without a chat model
the answers are extractive (the best supporting sentences), and the report
says how many were.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kgrag.evaluation import verdicts
from kgrag.evaluation.costs import Cost, CostMeter, CostSummary
from kgrag.evaluation.gold import GoldQuestion
from kgrag.evaluation.judge import Judge
from kgrag.evaluation.progress import NullProgress, Progress
from kgrag.evaluation.prompts import correctness_messages
from kgrag.evaluation.reports import AnswerScore, AnswersReport, ModeAnswers
from kgrag.evaluation.scoring import exact_match, f1_score

if TYPE_CHECKING:
    from kgrag.api.facade import KGRag


async def evaluate_answers(
    rag: KGRag,
    questions: Sequence[GoldQuestion],
    modes: Sequence[str],
    *,
    judge: bool = True,
    progress: Progress | None = None,
) -> AnswersReport:
    """EM, F1 and (with a chat model and ``judge``) the judge's accuracy, per mode."""
    asked = [q for q in questions if q.answers]
    chat = rag.models.chat if judge else None
    referee = Judge(chat) if chat is not None else None
    report = AnswersReport(
        questions=len(asked),
        judge=referee.identity if referee else None,
        without_answers=len(questions) - len(asked),
    )
    bar = progress or NullProgress()
    bar.start(len(asked) * len(modes), "answers")
    try:
        for mode in modes:
            report.modes[mode] = await _mode(rag, asked, mode, referee, bar)
    finally:
        bar.stop()
    return report


async def _mode(
    rag: KGRag,
    questions: Sequence[GoldQuestion],
    mode: str,
    referee: Judge | None,
    bar: Progress,
) -> ModeAnswers:
    param = rag.query_param(mode=mode)
    meter = CostMeter(rag.models.ledger)
    rows: list[AnswerScore] = []
    costs: list[Cost] = []
    judge_costs: list[Cost] = []
    for q in questions:
        with meter.measure() as cost:
            result = await rag.query(q.question, param)
        row = AnswerScore(
            question=q.question,
            answers=list(q.answers),
            answer=result.answer,
            exact=exact_match(result.answer, q.answers),
            f1=f1_score(result.answer, q.answers),
            extractive=result.extractive,
            cost=cost.total,
        )
        if referee is not None:
            with meter.measure() as judged:
                await _judge(referee, q, row)
            judge_costs.append(judged)
        rows.append(row)
        costs.append(cost)
        bar.advance(f"{mode}: {len(rows)}/{len(questions)}")
    return ModeAnswers(mode, rows, CostSummary.of(costs), CostSummary.of(judge_costs))


async def _judge(referee: Judge, q: GoldQuestion, row: AnswerScore) -> None:
    """The judge's verdict on ``row``'s answer, or why it gave none."""
    messages = correctness_messages(q.question, list(q.answers), row.answer)
    verdict = await referee.ask(messages, verdicts.correctness)
    if verdict.value is None:
        row.judge_error = verdict.error
    else:
        row.verdict = verdict.value[0]
