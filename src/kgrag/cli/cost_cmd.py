"""``kgrag cost``: what the index's models cost, as ``total = initial index + updates + queries``.

    kgrag cost [--since YYYY-MM-DD] [--by operation|document|model] [--top N] [--json]

The first line is the formula, then each figure (calls, cache hits,
tokens, seconds in calls, USD) as the sum of its parts; then the figures
per operation, and with ``--by document`` the costliest documents (``--by
model``: per model). Money needs a price table (``KGRAG_PRICES``); without
a price for a model that was used it is ``n/a`` (docs/cost.md).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from kgrag.cli.opening import OK, opened

if TYPE_CHECKING:
    from kgrag.cli.args import AddFlags, Subcommands
    from kgrag.config.settings import Settings
    from kgrag.maintenance.cost_report import CostFigures, CostReport

_FIGURES = (
    ("calls", "calls"),
    ("cache hits", "cache_hits"),
    ("prompt tokens", "prompt_tokens"),
    ("completion tokens", "completion_tokens"),
    ("seconds in calls", "seconds"),
    ("USD", "usd"),
)
_COLUMNS = ("calls", "cache hits", "prompt", "completion", "seconds", "USD")


def add_parser(sub: Subcommands, common: AddFlags) -> None:
    p = sub.add_parser(
        "cost", help="what the models cost: total = initial index + updates + queries"
    )
    common(p)
    p.add_argument("--since", metavar="DATE", help="count from this day on (UTC, YYYY-MM-DD)")
    p.add_argument(
        "--by",
        choices=("operation", "document", "model"),
        default="operation",
        help="the table after the operations: the costliest documents, or the models",
    )
    p.add_argument("--top", type=int, default=10, metavar="N", help="documents listed (10)")


async def run(args: argparse.Namespace, settings: Settings) -> int:
    async with opened(settings) as rag:
        report = await rag.cost_report(args.since, top=args.top)
    if args.json:
        print(json.dumps(report.as_dict(), ensure_ascii=False))
    else:
        print("\n".join(render(report, args.by)))
    return OK


def show(f: CostFigures, name: str) -> str:
    """One figure, as the table shows it (money ``n/a`` when not known)."""
    value = getattr(f, name)
    if name == "usd":
        if value is None:
            return "n/a"
        return f"${value:,.2f}" if value >= 1 else f"${value:.6f}"
    return f"{value:.1f}" if name == "seconds" else str(value)


def render(report: CostReport, by: str) -> list[str]:
    """The report as text lines: the formula first, then the tables."""
    lines = [report.formula if report.since is None else f"{report.formula} (since {report.since})"]
    parts = [*report.parts.values(), *([report.earlier] if report.earlier else [])]
    for label, name in _FIGURES:
        sums = " + ".join(show(p, name) for p in parts)
        lines.append(f"  {label + ':':<19}{show(report.total, name)} = {sums}")
    lines += ["", "by operation:", *_table("operation", report.operations)]
    if by == "model":
        lines += ["", "by model:", *_table("model", report.models)]
    if by == "document":
        rows = {f"{d.document} ({d.file_path or 'deleted'})": d.cost for d in report.documents}
        lines += ["", f"costliest documents (top {len(rows)}):", *_table("document", rows)]
    lines += _notes(report)
    return lines


def _table(first: str, rows: dict[str, CostFigures]) -> list[str]:
    if not rows:
        return ["  (none)"]
    width = max(len(first), *(len(name) for name in rows))
    head = "".join(f"{label:>12}" for label in _COLUMNS)
    out = [f"  {first:<{width}}{head}"]
    for name, f in rows.items():
        out.append(f"  {name:<{width}}" + "".join(f"{show(f, n):>12}" for _, n in _FIGURES))
    return out


def _notes(report: CostReport) -> list[str]:
    notes = []
    if not report.priced:
        notes.append("USD: n/a, no price table (KGRAG_PRICES, docs/cost.md)")
    elif report.unpriced:
        notes.append(
            f"USD: n/a where these models were used, no price: {', '.join(report.unpriced)}"
        )
    if report.earlier is not None:
        notes.append("earlier: costs stored before operations were recorded (by role only)")
    return ["", *notes] if notes else []
