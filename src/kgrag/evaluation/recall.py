"""Recall@k of gold passages: does retrieval bring back the passages that answer the question?

For each mode, a question's recall@k is the share of its gold passages
among the first ``k`` distinct passages in the order ``query_data`` lists
its chunks; the mode's recall@k is the mean over the questions (a question
whose gold is empty counts 0). No answer is written, so no chat model is
needed (one may still be asked for keywords).

A chunk belongs to the passage its document is known by: its ``file_path``
(a passage indexed one document each), or, when the gold names it so, its
document's id, source or path relative to the folder it was indexed from.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

from kgrag.evaluation.costs import Cost, CostMeter
from kgrag.evaluation.gold import GoldQuestion
from kgrag.evaluation.progress import NullProgress, Progress
from kgrag.evaluation.reports import ModeRecall, QuestionRecall, RecallReport
from kgrag.types import DocStatus

if TYPE_CHECKING:
    from kgrag.api.facade import KGRag

Aliases = Mapping[str, frozenset[str]]  # document id -> every name it is known by


def recall_at(ranked: list[str], gold: Collection[str], k: int) -> float:
    """Share of ``gold`` among the first ``k`` distinct keys of ``ranked``."""
    if not gold:
        return 0.0
    top = list(dict.fromkeys(ranked))[:k]
    return len(set(gold) & set(top)) / len(gold)


def chunk_key(chunk: Mapping[str, object], gold: Collection[str], aliases: Aliases) -> str:
    """The passage key of a ``query_data`` chunk: a gold name of its document, else its path."""
    path = str(chunk.get("file_path") or "")
    if path in gold:
        return path
    names = aliases.get(str(chunk.get("doc_id") or ""), frozenset())
    return next((n for n in sorted(names) if n in gold), path)


def ranked_keys(
    chunks: Sequence[Mapping[str, object]], gold: Collection[str], aliases: Aliases | None = None
) -> list[str]:
    """The distinct passage keys of ``chunks``, in their order."""
    return list(dict.fromkeys(chunk_key(c, gold, aliases or {}) for c in chunks))


async def document_aliases(rag: KGRag) -> dict[str, frozenset[str]]:
    """Every document's names: id, file path, source and path relative to its folder."""
    return {
        r.id: frozenset(n for n in (r.id, r.file_path, r.source, r.relative_path) if n)
        for r in await rag.storage.doc_status.by_status(*DocStatus)
    }


async def evaluate_recall(
    rag: KGRag,
    questions: Sequence[GoldQuestion],
    modes: Sequence[str],
    ks: Sequence[int] = (2, 5),
    *,
    progress: Progress | None = None,
) -> RecallReport:
    """Recall@k of every mode over ``questions`` on the open index ``rag``."""
    bar = progress or NullProgress()
    aliases = await document_aliases(rag)
    known = frozenset().union(*aliases.values())
    gold = sorted({g for q in questions for g in q.gold})
    report = RecallReport(
        ks=tuple(sorted(set(ks))),
        questions=len(questions),
        no_gold=sum(not q.gold for q in questions),
        unknown_gold=[g for g in gold if g not in known],
    )
    bar.start(len(questions) * len(modes), "recall")
    try:
        for mode in modes:
            report.modes[mode] = await _mode(rag, questions, mode, report.ks, aliases, bar)
    finally:
        bar.stop()
    return report


async def _mode(
    rag: KGRag,
    questions: Sequence[GoldQuestion],
    mode: str,
    ks: tuple[int, ...],
    aliases: Aliases,
    bar: Progress,
) -> ModeRecall:
    param = rag.query_param(mode=mode)
    meter = CostMeter(rag.models.ledger)
    rows: list[QuestionRecall] = []
    costs: list[Cost] = []
    started = time.perf_counter()
    for q in questions:
        with meter.measure() as cost:
            data = await rag.query_data(q.question, param)
        ranked = ranked_keys(data["chunks"], q.gold, aliases)
        recall = {k: recall_at(ranked, q.gold, k) for k in ks}
        rows.append(QuestionRecall(q.question, sorted(q.gold), ranked[: max(ks)], recall))
        costs.append(cost)
        bar.advance(f"{mode}: {len(rows)}/{len(questions)}")
    return ModeRecall.of(mode, rows, costs, time.perf_counter() - started)
