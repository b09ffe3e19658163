"""Path search: latency at 100,000 entities, recall@k on HotpotQA and MuSiQue.

``latency`` opens (building once, cached) the synthetic index of
``scripts/bench_query_scale.py`` and times, per question (two entity
names and two keywords, as that script asks them): the path search alone
(endpoints from the names, search and selection on the cached path graph)
and context-only queries in modes ``path`` and ``mix``.

``recall`` asks every question of the cached offline indexes of
``scripts/eval_recall.py`` (``runs/eval/<dataset>-<extractor>-...``; built
there first when missing) in each mode, and reports recall@2/5, seconds
per query, and how many questions got paths (``query_data``'s ``paths``).
Mode ``mix-nopaths`` is ``mix`` with ``path_max_paths=0`` (no path section).

    .venv/bin/python scripts/bench_path.py latency                 # 100k entities
    .venv/bin/python scripts/bench_path.py latency --n 20000 --queries 20
    .venv/bin/python scripts/bench_path.py recall --datasets hotpotqa,musique
    .venv/bin/python scripts/bench_path.py recall --extractor llm --llm-base-url http://127.0.0.1:8000/v1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import bench_query_scale as BQ
import eval_recall as ER
import numpy as np

from kgrag.evaluation.recall import ranked_keys, recall_at
from kgrag.retrieval.modes.path_graph import build_path_graph
from kgrag.retrieval.modes.path_search import Endpoint, PathLimits, search_paths, select_paths
from kgrag.retrieval.param import QueryParam

KS = (2, 5)
# Mode names for comparisons: a mode and the query fields it is asked with.
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {"mix-nopaths": ("mix", {"path_max_paths": 0})}


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


# -- latency on the synthetic index -----------------------------------------------


async def open_index(args: argparse.Namespace) -> tuple[Any, Any]:
    """The benchmark store (built first when missing) and its generator."""
    from kgrag.storage.sqlite import SQLiteStorage

    workdir = Path(args.workdir or Path(tempfile.gettempdir()) / f"kgrag-bench-{args.n}")
    syn = BQ.Synthetic(args.n, args.seed)
    storage = SQLiteStorage(workdir)
    await storage.open()
    if await storage.get_meta("bench_index") != {"n": args.n, "seed": args.seed}:
        if await storage.graph.node_count():
            raise SystemExit(f"{workdir} holds another index; give an empty --workdir")
        await BQ.build(storage, syn)
    return storage, syn


def search_once(graph: Any, names: list[str], limits: PathLimits) -> tuple[float, Any, int]:
    """(seconds, outcome, kept paths) of one search between the entities ``names``."""
    start = time.perf_counter()
    ends = [Endpoint(i, g) for g, name in enumerate(names) for i in graph.lookup(name)]
    outcome = search_paths(graph, ends, limits)
    kept = select_paths(outcome.paths, limits.max_paths)
    return time.perf_counter() - start, outcome, len(kept)


async def time_modes(storage: Any, questions: list, modes: list[str]) -> dict[str, Any]:
    """p50 / p95 wall ms of context-only queries per mode (after two warm-up queries)."""
    from kgrag.llm.embedding import EmbeddingService
    from kgrag.llm.fake import FakeEmbeddingProvider
    from kgrag.retrieval import QueryEngine

    engine = QueryEngine(storage, None, EmbeddingService(FakeEmbeddingProvider(dim=BQ.DIM)))
    out = {}
    for mode in modes:
        runs = []
        name, fields = VARIANTS.get(mode, (mode, {}))
        for i, (question, low, high) in enumerate([*questions[:2], *questions]):
            param = QueryParam(
                mode=name, only_need_context=True, ll_keywords=low, hl_keywords=high, **fields
            )
            start = time.perf_counter()
            await engine.query(question, param)
            if i >= 2:
                runs.append((time.perf_counter() - start) * 1e3)
        out[mode] = {"p50_ms": round(pct(runs, 50), 1), "p95_ms": round(pct(runs, 95), 1)}
        print(
            f"  query {mode:5} p50 {out[mode]['p50_ms']:7.1f} ms  p95 {out[mode]['p95_ms']:7.1f} ms"
        )
    return out


async def latency(args: argparse.Namespace) -> dict[str, Any]:
    storage, syn = await open_index(args)
    start = time.perf_counter()
    graph = await build_path_graph(storage)
    built = time.perf_counter() - start
    print(
        f"path graph: {len(graph.entities):,} entities, {len(graph.neighbours) // 2:,} edges, built in {built:.2f} s"
    )
    qs = BQ.questions(syn, args.queries)
    limits = PathLimits(max_hops=args.hops)
    for _, low, _ in qs[:2]:
        search_once(graph, low, limits)
    runs = [search_once(graph, low, limits) for _, low, _ in qs]
    ms = [r[0] * 1e3 for r in runs]
    result: dict[str, Any] = {
        "entities": len(graph.entities),
        "build_s": round(built, 2),
        "search_p50_ms": round(pct(ms, 50), 2),
        "search_p95_ms": round(pct(ms, 95), 2),
        "expanded_p50": statistics.median(r[1].expanded for r in runs),
        "stopped": {
            s: sum(r[1].stopped == s for r in runs) for s in ("done", "max_expanded", "deadline")
        },
        "with_paths": sum(r[2] > 0 for r in runs),
        "queries": len(runs),
    }
    print(
        f"search alone ({len(runs)} questions, {args.hops} hops): p50 {result['search_p50_ms']} ms, "
        f"p95 {result['search_p95_ms']} ms, {result['expanded_p50']} expansions (p50), "
        f"stopped {result['stopped']}, {result['with_paths']} with paths"
    )
    result["modes"] = await time_modes(storage, qs, args.modes or ["path", "mix"])
    await storage.close()
    return result


# -- recall on the evaluation indexes ------------------------------------------------


async def mode_recall(rag: Any, ds: Any, mode: str) -> dict[str, Any]:
    """Recall@k (percent), seconds per query, and the questions answered with paths."""
    name, fields = VARIANTS.get(mode, (mode, {}))
    param = rag.query_param(mode=name, **fields)
    sums = {k: 0.0 for k in KS}
    with_paths, paths, start = 0, 0, time.perf_counter()
    for question, gold in ds.questions:
        data = await rag.query_data(question, param)
        ranked = ranked_keys(data["chunks"], gold)
        for k in KS:
            sums[k] += recall_at(ranked, gold, k)
        found = data.get("paths") or []
        with_paths += bool(found)
        paths += len(found)
    n = max(len(ds.questions), 1)
    out: dict[str, Any] = {f"recall@{k}": round(100 * s / n, 1) for k, s in sums.items()}
    out["s_per_query"] = round((time.perf_counter() - start) / n, 3)
    out["with_paths"] = with_paths
    out["paths_per_question"] = round(paths / n, 2)
    return out


async def recall(args: argparse.Namespace) -> dict[str, Any]:
    from kgrag.api.facade import KGRag

    er_args = ER.parse_args(_eval_argv(args))
    results: dict[str, Any] = {}
    for name in er_args.datasets:
        ds = ER.load(name, Path(er_args.data), er_args.questions or None, er_args.slice)
        workdir = ER.index_dir(er_args, ds)
        async with KGRag(ER.settings_for(er_args, workdir, name)) as rag:
            stats = await ER.ensure_index(rag, ds, workdir)
            rows = {}
            for mode in args.modes or ["path", "mix", "ppr", "naive"]:
                rows[mode] = await mode_recall(rag, ds, mode)
                print(f"  {name:9} {mode:6} {rows[mode]}", flush=True)
        results[name] = {
            "workdir": str(workdir),
            "questions": len(ds.questions),
            "index": stats,
            "modes": rows,
        }
    return results


def _eval_argv(args: argparse.Namespace) -> list[str]:
    argv = [
        "--datasets",
        args.datasets,
        "--extractor",
        args.extractor,
        "--workdir",
        args.eval_workdir,
    ]
    for flag, value in (("--llm-base-url", args.llm_base_url), ("--llm-model", args.llm_model)):
        if value:
            argv += [flag, value]
    if args.questions:
        argv += ["--questions", str(args.questions)]
    return argv


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    lat = sub.add_parser("latency", help="path search and query times on the synthetic index")
    lat.add_argument("--n", type=int, default=100_000, help="entities (default 100,000)")
    lat.add_argument(
        "--workdir", help="the index (default: <tmp>/kgrag-bench-<n>, as bench_query_scale)"
    )
    lat.add_argument("--queries", type=int, default=40)
    lat.add_argument("--hops", type=int, default=3)
    lat.add_argument("--seed", type=int, default=0)
    rec = sub.add_parser("recall", help="recall@k per mode on the cached evaluation indexes")
    rec.add_argument("--datasets", default="hotpotqa,musique")
    rec.add_argument("--extractor", choices=("nlp", "llm"), default="nlp")
    rec.add_argument("--llm-base-url", default=None)
    rec.add_argument("--llm-model", default=None)
    rec.add_argument("--questions", type=int, default=0, help="first N questions (0: all)")
    rec.add_argument("--eval-workdir", default="runs/eval")
    for p in (lat, rec):
        p.add_argument("--modes", type=lambda s: [m for m in s.split(",") if m], default=None)
        p.add_argument("--out", default=None, help="write the results as JSON here")
    return ap.parse_args(argv)


async def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    results = await (latency(args) if args.what == "latency" else recall(args))
    if args.out:
        text = json.dumps({"args": vars(args), "results": results}, indent=1)
        await asyncio.to_thread(Path(args.out).write_text, text)
    return results


if __name__ == "__main__":
    asyncio.run(main())
