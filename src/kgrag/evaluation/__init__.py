"""Measuring an index on your own questions: retrieval recall, answer accuracy, pairwise wins.

    from kgrag.evaluation import read_gold, evaluate_recall

    gold = read_gold("questions.jsonl")
    async with KGRag(settings) as rag:
        report = await evaluate_recall(rag, gold.questions, ["naive", "ppr"], [2, 5])
    print(report.to_markdown())

- :func:`read_gold` reads a gold file (JSONL, HotpotQA, MuSiQue, SQuAD),
  :func:`index_passages` indexes its passages one document each;
- :func:`evaluate_recall`: recall@k of the gold passages per mode;
- :func:`evaluate_answers`: exact match, token F1 and the judge's verdict;
- :func:`compare_answers`: the judge's pairwise win rates of two answer sets,
  both orders asked; :func:`generate_answers` makes a set from the index.

``kgrag eval`` (docs/evaluation.md) runs them from the command line.
"""

from kgrag.evaluation.answers import evaluate_answers
from kgrag.evaluation.compare import compare_answers, generate_answers
from kgrag.evaluation.configs import RunConfig, run_config
from kgrag.evaluation.costs import Cost, CostSummary
from kgrag.evaluation.detect import GoldOptions, read_gold
from kgrag.evaluation.gold import GoldQuestion, GoldSet
from kgrag.evaluation.indexing import index_passages
from kgrag.evaluation.jsonl import AnswerRow, answer_rows
from kgrag.evaluation.recall import evaluate_recall, recall_at
from kgrag.evaluation.reports import (
    CRITERIA,
    AnswerScore,
    AnswersReport,
    CompareReport,
    ModeAnswers,
    ModeRecall,
    OrderVerdict,
    PairJudgement,
    QuestionRecall,
    RecallReport,
)
from kgrag.evaluation.scoring import exact_match, f1_score

__all__ = [
    "CRITERIA",
    "AnswerRow",
    "AnswerScore",
    "AnswersReport",
    "CompareReport",
    "Cost",
    "CostSummary",
    "GoldOptions",
    "GoldQuestion",
    "GoldSet",
    "ModeAnswers",
    "ModeRecall",
    "OrderVerdict",
    "PairJudgement",
    "QuestionRecall",
    "RecallReport",
    "RunConfig",
    "answer_rows",
    "compare_answers",
    "evaluate_answers",
    "evaluate_recall",
    "exact_match",
    "f1_score",
    "generate_answers",
    "index_passages",
    "read_gold",
    "recall_at",
    "run_config",
]
