"""Precision and recall of resolution on a labelled graph fixture (docs/resolution.md).

A fixture is JSON: ``entities`` (name -> type, types, description,
sources, neighbours), ``chunks`` (id -> text) and ``pairs`` (a, b, label
``same`` or ``different``, group type). Resolution runs over the whole
fixture graph; a pair is predicted *same* when both names end in one
group. Per group type: recall over the ``same`` pairs, and the number of
``different`` pairs wrongly joined; precision over all pairs predicted
same.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgrag.curation.resolution.engine import Options, resolve_view
from kgrag.curation.resolution.view import Entity, GraphView


def load_fixture(path: Path) -> tuple[GraphView, list[dict[str, str]]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    entities = [
        Entity(
            name,
            e.get("type", "UNKNOWN"),
            frozenset(e.get("types", [])),
            e.get("description", ""),
            frozenset(e.get("sources", [])),
            frozenset(e.get("neighbours", [])),
        )
        for name, e in data["entities"].items()
    ]
    return GraphView.of(entities, data.get("chunks", {})), data["pairs"]


@dataclass(slots=True)
class Tally:
    same: int = 0  # labelled same
    found: int = 0  # labelled same, predicted same
    different: int = 0  # labelled different
    joined: int = 0  # labelled different, predicted same

    @property
    def recall(self) -> float | None:
        return self.found / self.same if self.same else None

    @property
    def precision(self) -> float | None:
        said = self.found + self.joined
        return self.found / said if said else None


@dataclass(slots=True)
class Scores:
    by_type: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    total: Tally = field(default_factory=Tally)
    errors: list[dict[str, Any]] = field(default_factory=list)

    def add(self, pair: dict[str, str], predicted: bool) -> None:
        for tally in (self.by_type[pair["type"]], self.total):
            if pair["label"] == "same":
                tally.same += 1
                tally.found += predicted
            else:
                tally.different += 1
                tally.joined += predicted
        if predicted != (pair["label"] == "same"):
            self.errors.append(dict(pair))


async def evaluate(
    view: GraphView, pairs: list[dict[str, str]], opts: Options, **kw: Any
) -> Scores:
    """Resolve ``view`` and score the labelled ``pairs``."""
    report = await resolve_view(view, opts, **kw)
    group_of = {n: i for i, g in enumerate(report.groups) for n in g.names}
    scores = Scores()
    for p in pairs:
        ga, gb = group_of.get(p["a"]), group_of.get(p["b"])
        scores.add(p, ga is not None and ga == gb)
    return scores


def merge(all_scores: list[Scores]) -> Scores:
    out = Scores()
    for s in all_scores:
        for kind, t in s.by_type.items():
            mine = out.by_type[kind]
            for tally in (mine, out.total):
                tally.same += t.same
                tally.found += t.found
                tally.different += t.different
                tally.joined += t.joined
        out.errors += s.errors
    return out


def table(scores: Scores) -> str:
    """A Markdown table: one row per group type, then all.

    Recall is over a type's *same* pairs; "kept apart" over its *different*
    pairs; precision over the pairs predicted same (where the type has any
    *same* pairs: for a type of hard negatives every join is a false one).
    """

    def fmt(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}"

    rows = [
        "| group type | same pairs | found | recall | different pairs | wrongly joined "
        "| kept apart | precision |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for kind, t in [*sorted(scores.by_type.items()), ("**all**", scores.total)]:
        apart = 1 - t.joined / t.different if t.different else None
        rows.append(
            f"| {kind} | {t.same} | {t.found} | {fmt(t.recall)} | {t.different} | {t.joined} | "
            f"{fmt(apart)} | {fmt(t.precision if t.same else None)} |"
        )
    return "\n".join(rows)
