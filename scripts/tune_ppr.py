"""Sweep the ppr mode's settings over an index built by ``eval_recall.py``.

Usage::

    python scripts/tune_ppr.py --dataset hotpotqa --workdir runs/eval \\
        --grid 'damping=0.3,0.5,0.7' --grid 'chunk_weight=0.1,0.5'

Each ``--grid name=v1,v2`` names a field of
:class:`kgrag.retrieval.modes.ppr.PPRSettings` (``edges.leaf`` and
``edges.chunk_edge``, ``edges.idf`` reach :class:`EdgeWeights`); every
combination (other fields at their shipped defaults) is evaluated with the same questions and printed as one line
with recall@2 and recall@5, best recall@5 last. The index must exist (run
``eval_recall.py`` with the same dataset and embedder first); this script
only queries.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_recall


def parse_value(text: str) -> object:
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        return float(text)


def settings_for(combo: dict[str, object]):
    from kgrag.retrieval.modes.ppr import PPRSettings

    edges = {k.split(".", 1)[1]: v for k, v in combo.items() if k.startswith("edges.")}
    plain = {k: v for k, v in combo.items() if not k.startswith("edges.")}
    base = PPRSettings()  # fields not in the grid keep the shipped defaults
    return dataclasses.replace(base, **plain, edges=dataclasses.replace(base.edges, **edges))


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="hotpotqa", choices=eval_recall.DATASETS)
    ap.add_argument("--grid", action="append", default=[], help="name=v1,v2,...")
    ap.add_argument("--questions", type=int, default=0)
    args, rest = ap.parse_known_args(argv)
    eval_args = eval_recall.parse_args(
        ["--datasets", args.dataset, "--questions", str(args.questions), *rest]
    )
    grid = {
        name: [parse_value(v) for v in values.split(",")]
        for name, values in (g.split("=", 1) for g in args.grid)
    }
    from kgrag.api.facade import KGRag
    from kgrag.retrieval.modes import ppr as retrieve_ppr

    ds = eval_recall.load(
        args.dataset, Path(eval_args.data), eval_args.questions or None, eval_args.slice
    )
    workdir = eval_recall.index_dir(eval_args, ds)
    if not (workdir / "eval_index.json").exists():
        raise SystemExit(f"no index at {workdir}: run eval_recall.py first")
    rows = []
    async with KGRag(eval_recall.settings_for(eval_args, workdir, args.dataset)) as rag:
        for values in itertools.product(*grid.values()):
            combo = dict(zip(grid, values, strict=False))
            retrieve_ppr.SETTINGS = settings_for(combo)
            row = await eval_recall.evaluate_mode(rag, ds, "ppr")
            rows.append((row["recall@5"], row["recall@2"], combo))
            print(f"R@2 {row['recall@2']:5.1f}  R@5 {row['recall@5']:5.1f}  {combo}", flush=True)
    best = max(rows, key=lambda r: (r[0], r[1]))
    print(f"best: R@5 {best[0]} R@2 {best[1]} {best[2]}")


if __name__ == "__main__":
    asyncio.run(main())
