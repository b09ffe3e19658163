"""Benchmark the ppr mode on the 100k-entity synthetic index: first answer, p50/p95, ranking.

Uses the index of ``scripts/bench_query_scale.py`` (built once, cached in
``--workdir``) and stores its walk graph if it has none (the script builds
the index through the storage, not through commits). Then:

1. **first answer of a fresh process**, ``--processes`` times: a new Python
   process opens the index and asks one ppr question (context only, the
   keywords given). Reported in full and split into the vector namespaces'
   load (what any mode's first query pays) and the rest (the walk graph
   and the query);
2. **p50/p95** of wall and CPU time over ``--queries`` questions, for the
   forward push (the mode's default) and for the exact power iteration;
3. **ranking**: how often the push's top ``chunk_top_k`` chunks are the
   exact walk's (same order), and the overlap of their entity lists.

    .venv/bin/python scripts/bench_ppr.py                 # 100k entities
    .venv/bin/python scripts/bench_ppr.py --n 20000 --queries 20
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_query_scale import DIM, Synthetic, build, pct, questions

from kgrag.knowledge.walk import store as walk_store
from kgrag.llm.embedding import EmbeddingService
from kgrag.llm.fake import FakeEmbeddingProvider
from kgrag.retrieval import QueryEngine, QueryParam
from kgrag.retrieval.modes import ppr as ppr_mode
from kgrag.storage.sqlite import SQLiteStorage


def param(q: tuple[str, list[str], list[str]]) -> QueryParam:
    return QueryParam(mode="ppr", only_need_context=True, ll_keywords=q[1], hl_keywords=q[2])


async def prepare(workdir: Path, syn: Synthetic) -> None:
    """Build the index if needed, and store its walk graph if it has none."""
    storage = SQLiteStorage(workdir)
    await storage.open()
    if await storage.get_meta("bench_index") != {"n": syn.n, "seed": syn.seed}:
        if await storage.graph.node_count():
            raise SystemExit(f"{workdir} holds another index; give an empty --workdir")
        await build(storage, syn)
    if await walk_store.read_head(storage) is None:
        wall, cpu = time.perf_counter(), time.process_time()
        async with storage.transaction():
            await walk_store.rewrite(storage)
        print(
            f"stored the walk graph: {time.perf_counter() - wall:.1f} s wall, "
            f"{time.process_time() - cpu:.1f} s CPU (once; commits keep it current)"
        )
    await storage.close()


async def child(workdir: Path, n: int, preload: bool) -> dict[str, float]:
    """One fresh process's first ppr answer (``preload``: load the vectors first, timed apart)."""
    start = time.perf_counter()
    storage = SQLiteStorage(workdir)
    await storage.open()
    engine = QueryEngine(storage, None, EmbeddingService(FakeEmbeddingProvider(dim=DIM)))
    q = questions(Synthetic(n), 1, seed=11)[0]
    out = {"open_s": time.perf_counter() - start}
    if preload:
        t = time.perf_counter()
        probe = np.ones(DIM, np.float32)
        for ns in ("entities", "relations", "chunks"):
            await storage.vectors(ns).query(probe, 1)
        out["vectors_s"] = time.perf_counter() - t
    t, cpu = time.perf_counter(), time.process_time()
    await engine.query(q[0], param(q))
    out["first_s"], out["first_cpu_s"] = time.perf_counter() - t, time.process_time() - cpu
    await storage.close()
    return out


def fresh_processes(workdir: Path, n: int, count: int) -> None:
    for preload in (False, True):
        runs = []
        for _ in range(count):
            cmd = [sys.executable, __file__, "--child", str(workdir), "--n", str(n)]
            done = subprocess.run(
                cmd + (["--preload"] if preload else []), capture_output=True, text=True, check=True
            )
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        first = sorted(r["first_s"] for r in runs)
        line = f"first ppr answer, fresh process ({count} runs): median {np.median(first):.2f} s"
        if preload:
            vec = np.median([r["vectors_s"] for r in runs])
            line += (
                f" after the vector namespaces load ({vec:.2f} s, any mode's first query pays it)"
            )
        else:
            line += " (everything: vectors, walk graph, query)"
        print(line + f"; runs {', '.join(f'{x:.2f}' for x in first)}")


async def timings(workdir: Path, syn: Synthetic, count: int) -> None:
    """p50/p95 of context-only queries, push and exact; then their rankings compared."""
    storage = SQLiteStorage(workdir)
    await storage.open()
    engine = QueryEngine(storage, None, EmbeddingService(FakeEmbeddingProvider(dim=DIM)))
    qs = questions(syn, count)
    found: dict[str, list] = {}
    print(
        f"{'walk':6} {'p50 wall':>9} {'p95 wall':>9} {'p50 CPU':>9} {'p95 CPU':>9}  (ms, {count} queries)"
    )
    for label, eps in (("push", ppr_mode.PUSH_EPS), ("exact", 0.0)):
        ppr_mode.SETTINGS = dataclasses.replace(ppr_mode.SETTINGS, push_eps=eps)
        for q in qs[:3]:
            await engine.query(q[0], param(q))  # warm caches
        walls, cpus = [], []
        for q in qs:
            wall, cpu = time.perf_counter(), time.process_time()
            await engine.query(q[0], param(q))
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        print(
            f"{label:6} {pct(walls, 50):9.1f} {pct(walls, 95):9.1f} {pct(cpus, 50):9.1f} {pct(cpus, 95):9.1f}"
        )
        found[label] = [await ranking(engine, q) for q in qs]
    agreement(found["push"], found["exact"])
    await storage.close()


async def ranking(engine: QueryEngine, q: tuple[str, list[str], list[str]]):
    """The chunk ids (in order) and entity names of one question's context."""
    data = await engine.query_data(q[0], param(q))
    return [c["chunk_id"] for c in data["chunks"]], {e["entity_name"] for e in data["entities"]}


def agreement(push: list, exact: list) -> None:
    same = sum(p[0] == e[0] for p, e in zip(push, exact, strict=True))
    sets = sum(set(p[0]) == set(e[0]) for p, e in zip(push, exact, strict=True))
    overlap = [len(p[1] & e[1]) / max(len(e[1]), 1) for p, e in zip(push, exact, strict=True)]
    print(
        f"push vs exact: top chunks in the same order {same}/{len(push)}, same set {sets}/{len(push)}; "
        f"entity lists overlap mean {np.mean(overlap):.3f}, worst {min(overlap):.3f}"
    )


async def main(args: argparse.Namespace) -> None:
    workdir = Path(args.workdir or Path(tempfile.gettempdir()) / f"kgrag-bench-{args.n}")
    if args.child:
        print(json.dumps(await child(Path(args.child), args.n, args.preload)))
        return
    syn = Synthetic(args.n, args.seed)
    await prepare(workdir, syn)
    fresh_processes(workdir, args.n, args.processes)
    await timings(workdir, syn, args.queries)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="entities (default 100,000)")
    parser.add_argument("--workdir", help="the index (default: <tmp>/kgrag-bench-<n>)")
    parser.add_argument("--queries", type=int, default=40, help="timed queries per walk")
    parser.add_argument("--processes", type=int, default=3, help="fresh processes timed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--preload", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
