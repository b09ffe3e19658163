"""The Markdown reports of ``kgrag eval``: a heading, what was measured, one table, notes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kgrag.evaluation.costs import CostSummary
from kgrag.evaluation.reports import CRITERIA

if TYPE_CHECKING:
    from kgrag.evaluation.reports import AnswersReport, CompareReport, RecallReport

LISTED = 10  # failures and unknown keys named in a report (the JSON has them all)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table; every column but the first right-aligned."""
    align = ["---", *("---:" for _ in headers[1:])]
    lines = [headers, align, *[[_cell(v) for v in row] for row in rows]]
    return "\n".join("| " + " | ".join(map(str, line)) + " |" for line in lines)


def _cell(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3g}" if 0 < abs(value) < 1 else f"{value:.1f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def bullets(meta: Mapping[str, object]) -> str:
    return "\n".join(f"- {k}: {v}" for k, v in meta.items())


def cost_cells(cost: CostSummary) -> list[float]:
    """Model calls and tokens per answer."""
    per = cost.per_answer
    tokens = per.get("prompt_tokens", 0) + per.get("completion_tokens", 0)
    return [per.get("calls", 0.0), round(tokens, 1)]


def _doc(title: str, meta: Mapping[str, object], body: list[str]) -> str:
    parts = [f"# {title}", bullets(meta), *body]
    return "\n\n".join(p for p in parts if p) + "\n"


def recall_markdown(report: RecallReport) -> str:
    ks = report.ks
    headers = ["mode", *(f"R@{k}" for k in ks), "s/query", "calls/q", "tokens/q"]
    rows = []
    for mode, r in report.modes.items():
        per_query = round(r.seconds / max(len(r.questions), 1), 3)
        rows.append([mode, *(r.recall_at(k) for k in ks), per_query, *cost_cells(r.cost)])
    notes = []
    if report.no_gold:
        notes.append(f"{report.no_gold} question(s) have no gold passage; they count 0.")
    if report.unknown_gold:
        named = ", ".join(report.unknown_gold[:LISTED])
        more = "…" if len(report.unknown_gold) > LISTED else ""
        notes.append(
            f"{len(report.unknown_gold)} gold key(s) name no indexed document: {named}{more}"
        )
    meta = {"questions": report.questions, **report.meta}
    return _doc("Retrieval recall", meta, [table(headers, rows), *notes])


def answers_markdown(report: AnswersReport) -> str:
    headers = ["mode", "EM", "F1", "judge acc.", "judged", "judge failed", "extractive"]
    headers += ["calls/answer", "tokens/answer", "judge calls/answer"]
    rows = []
    for mode, r in report.modes.items():
        s = r.summary()
        judge_calls = r.judge_cost.per_answer.get("calls", 0.0) if report.judge else None
        cells = [s["exact_match"], s["f1"], s["judge_accuracy"], s["judged"]]
        cells += [s["judge_failures"], s["extractive"], *cost_cells(r.cost), judge_calls]
        rows.append([mode, *cells])
    failed = [(q.question, q.judge_error) for m in report.modes.values() for q in m.questions]
    notes = [_failures([(question, error) for question, error in failed if error])]
    if report.without_answers:
        notes.append(f"{report.without_answers} question(s) without gold answers were left out.")
    meta = {"questions": report.questions, "judge": report.judge or "none", **report.meta}
    return _doc("Answer accuracy", meta, [table(headers, rows), *notes])


def compare_markdown(report: CompareReport) -> str:
    a, b = report.labels["A"], report.labels["B"]
    rates, agree = report.win_rates(), report.agreement()
    headers = ["criterion", "A wins %", "B wins %", "orders agree %"]
    rows = [[c, rates[c]["A"], rates[c]["B"], agree[c]] for c in CRITERIA]
    meta = {
        "A": a,
        "B": b,
        "judge": report.judge,
        "judged": f"{len(report.judged)} of {len(report.pairs)} questions, both orders each",
        "judge calls/question": report.cost.per_answer.get("calls", 0.0),
        **report.meta,
    }
    notes = [_failures([(p.question, p.error) for p in report.pairs if p.error])]
    unpaired = {k: v for k, v in report.unpaired.items() if v}
    if unpaired:
        notes.append(
            "Answered by one side only (left out): "
            + ", ".join(f"{k} {v}" for k, v in unpaired.items())
        )
    for side, cost in report.answer_costs.items():
        calls, tokens = cost_cells(cost)
        notes.append(f"Answers {side}: {calls} calls and {tokens} tokens per answer.")
    return _doc("Pairwise comparison", meta, [table(headers, rows), *notes])


def _failures(failed: list[tuple[str, str | None]]) -> str:
    """The questions the judge gave no readable verdict on, the first few named."""
    if not failed:
        return ""
    lines = [f"{len(failed)} judgement(s) failed (not counted):"]
    lines += [f"- {question}: {error}" for question, error in failed[:LISTED]]
    if len(failed) > LISTED:
        lines.append(f"- … and {len(failed) - LISTED} more (see the JSON report)")
    return "\n".join(lines)
