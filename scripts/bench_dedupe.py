"""Time and memory of ``resolve_entities`` (``kgrag dedupe`` dry run) on the 100k-entity index.

The index is the one ``scripts/bench_query_scale.py`` builds through the
real :class:`SQLiteStorage` (same builder, same cache directory), so the
figure covers the whole dry run from the store: reading every node, edge
and entity vector, blocking, the sentence checks on shared chunks read
from the store, scoring, grouping and the homonym report.

Its synthetic names are two made-up words each ("Bako Tirefu"), about 49
names per word and no one-word names, so almost no name contains another
and no name vector is close to another: blocking finds few candidates.
``--aliases`` therefore also measures a copy of the index with alias nodes
added, one per ten entities: one in ten of those the same name with a
title ("Mr. Bako Tirefu", a key match, its vector the original's plus
noise), the rest the second word alone ("Tirefu", contained in some fifty
names: the hard case for containment blocking and the ambiguity
penalty), each sharing one source chunk with its entity.

    .venv/bin/python scripts/bench_dedupe.py                 # 100k entities, as built
    .venv/bin/python scripts/bench_dedupe.py --aliases       # + the copy with alias nodes
    .venv/bin/python scripts/bench_dedupe.py --n 20000 --aliases

Each measurement runs in a fresh process, so the peak RSS is that of the
dry run alone (imports and the opened store included), not of the build.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_query_scale import TYPES, Synthetic, build

from kgrag.config.settings import Settings
from kgrag.curation.resolution import resolve_entities
from kgrag.curation.resolution.view import load_view
from kgrag.ingest.ids import entity_vector_id
from kgrag.storage.sqlite import SQLiteStorage

ALIAS_EVERY = 10  # one alias node per ten entities
TITLED_EVERY = 10  # of the aliases, one in ten is "Mr. <name>", the rest the second word


def rss_mib() -> float:
    """Current resident set size (Linux ``/proc``), MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def ensure_base(workdir: Path, syn: Synthetic) -> None:
    """Build the benchmark index once (the same cache ``bench_query_scale.py`` uses)."""
    storage = SQLiteStorage(workdir)
    await storage.open()
    try:
        if await storage.get_meta("bench_index") != {"n": syn.n, "seed": syn.seed}:
            if await storage.graph.node_count():
                raise SystemExit(f"{workdir} holds another index; give an empty --workdir")
            await build(storage, syn)
    finally:
        await storage.close()


def alias_of(syn: Synthetic, i: int) -> str:
    name = syn.name(i)
    return f"Mr. {name}" if (i // ALIAS_EVERY) % TITLED_EVERY == 0 else name.split()[1]


async def ensure_aliases(base: Path, workdir: Path, syn: Synthetic) -> None:
    """A copy of ``base`` with one alias node per ten entities (see the module docstring)."""
    marker = {"n": syn.n, "seed": syn.seed, "aliases": ALIAS_EVERY}
    if (workdir / "aliases.json").exists():
        if json.loads((workdir / "aliases.json").read_text()) == marker:
            return
    shutil.rmtree(workdir, ignore_errors=True)
    shutil.copytree(base, workdir)
    storage = SQLiteStorage(workdir)
    await storage.open()
    try:
        for lo in range(0, syn.n, 5000):
            async with storage.transaction():
                await _add_aliases(storage, syn, range(lo, min(lo + 5000, syn.n), ALIAS_EVERY))
    finally:
        await storage.close()
    (workdir / "aliases.json").write_text(json.dumps(marker))


async def _add_aliases(storage: SQLiteStorage, syn: Synthetic, rows: range) -> None:
    rng = np.random.default_rng([syn.seed, rows.start, 99])
    originals = {alias_of(syn, i): i for i in rows}  # a shared surname: the last entity's
    found = await storage.vectors("entities").get_vectors(
        [entity_vector_id(syn.name(i)) for i in originals.values()]
    )
    nodes, ids, vecs = {}, [], []
    for alias, i in originals.items():
        nodes[alias] = {
            "entity_type": TYPES[i % len(TYPES)],
            "description": f"{alias} is mentioned near {syn.words[i % 4096]}.",
            "source_ids": syn.sources(i)[:1],
            "file_paths": [f"docs/{i % 500}.md"],
            "extractor": "llm",
            "created_at": 0,
        }
        own = found[entity_vector_id(syn.name(i))]
        vec = own + 0.03 * rng.standard_normal(own.shape).astype(np.float32)
        ids.append(entity_vector_id(alias))
        vecs.append(vec / np.linalg.norm(vec))
    await storage.graph.upsert_nodes(nodes)
    await storage.vectors("entities").upsert(
        ids, np.stack(vecs).astype(np.float32), [{"name": a} for a in nodes]
    )


async def measure(workdir: Path) -> dict[str, float]:
    """One dry run from the store, timed, then the read alone (warm) for the split."""
    base_rss = rss_mib()
    storage = SQLiteStorage(workdir)
    await storage.open()
    settings = Settings(workdir=workdir, llm_provider="none", embedding_provider="fake")
    started, cpu = time.perf_counter(), time.process_time()
    report = await resolve_entities(storage, settings)
    total, cpu = time.perf_counter() - started, time.process_time() - cpu
    peak = peak_mib()
    started = time.perf_counter()
    view = await load_view(storage)
    read = time.perf_counter() - started
    await storage.close()
    sizes = [len(g.names) for g in report.groups]
    return {
        "entities": report.stats["entities"],
        "candidate_pairs": report.stats["candidates"],
        "accepted_pairs": report.stats["accepted_pairs"],
        "groups": len(report.groups),
        "grouped_names": sum(sizes),
        "largest_group": max(sizes, default=0),
        "homonyms": len(report.homonyms),
        "seconds": round(total, 1),
        "cpu_seconds": round(cpu, 1),
        "read_view_seconds_warm": round(read, 1),
        "vectors": len(view.vectors),
        "rss_before_mib": round(base_rss),
        "peak_rss_mib": round(peak),
    }


def run_measure(workdir: Path) -> dict[str, float]:
    """``measure`` in a fresh process, so its peak RSS is the dry run's alone."""
    out = subprocess.run(
        [sys.executable, __file__, "--measure", str(workdir)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def show(label: str, row: dict[str, float]) -> None:
    print(f"{label}: " + ", ".join(f"{k} {v:,}" for k, v in row.items()), flush=True)


async def prepare(args: argparse.Namespace) -> list[tuple[str, Path]]:
    tmp = Path(tempfile.gettempdir())
    base = Path(args.workdir or tmp / f"kgrag-bench-{args.n}")
    syn = Synthetic(args.n, args.seed)
    await ensure_base(base, syn)
    runs = [("as built", base)]
    if args.aliases:
        aliased = Path(args.alias_workdir or tmp / f"kgrag-bench-{args.n}-aliases")
        await ensure_aliases(base, aliased, syn)
        runs.append(("with alias nodes", aliased))
    return runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000, help="entities (default 100,000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", help="the benchmark index (default: <tmp>/kgrag-bench-<n>)")
    ap.add_argument("--aliases", action="store_true", help="also measure a copy with alias nodes")
    ap.add_argument("--alias-workdir", help="default: <tmp>/kgrag-bench-<n>-aliases")
    ap.add_argument("--measure", help=argparse.SUPPRESS)  # internal: one run in this process
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(asyncio.run(measure(Path(args.measure)))))
        return
    for label, workdir in asyncio.run(prepare(args)):
        show(label, run_measure(workdir))


if __name__ == "__main__":
    main()
