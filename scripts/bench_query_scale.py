"""Benchmark context-only queries on a large synthetic index.

Builds (once, cached in ``--workdir``) an index of N entities through the
real :class:`SQLiteStorage`: a Zipf-like graph with about two edges per
entity (hubs reach a few thousand neighbours), 384-dim unit vectors for
entities, relations and N/3 chunks (a hashed-words part, so keyword
queries find what they name, plus a clustered random part), chunk texts,
the BM25 index and the ppr mode's stored walk graph. Then it opens the
index afresh, times the first query (it loads the vector matrices) and
runs context-only queries with ``ll_keywords``/``hl_keywords`` supplied
(no chat model) in every mode, reporting p50/p95 of wall time and of
process CPU time.

    .venv/bin/python scripts/bench_query_scale.py                  # 100k entities
    .venv/bin/python scripts/bench_query_scale.py --n 20000 --queries 20
    .venv/bin/python scripts/bench_query_scale.py --screen-rows 100000   # + approximate screen
    .venv/bin/python scripts/bench_query_scale.py --vector-rows 1000000  # search alone at 1M rows
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import tempfile
import time
from pathlib import Path

import numpy as np

from kgrag.knowledge.walk import store as walk_store
from kgrag.llm.embedding import EmbeddingService
from kgrag.llm.fake import FakeEmbeddingProvider, fake_vector
from kgrag.retrieval import QueryEngine, QueryParam
from kgrag.storage.base import edge_key
from kgrag.storage.sqlite import SQLiteStorage
from kgrag.storage.sqlite.matrix import MatrixIndex

DIM = 384
MODES = ("local", "global", "hybrid", "mix", "naive", "ppr")
TYPES = ("PERSON", "ORGANIZATION", "LOCATION", "EVENT", "DEVICE", "CONCEPT", "PRODUCT", "SYSTEM")
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
ZIPF_OFFSET = 6  # endpoint i is drawn with probability ~ 1/(i + 6): top hub ~3.5k edges at 100k
BATCH = 5000


class Synthetic:
    """Deterministic names, texts and vectors of the synthetic index."""

    def __init__(self, n: int, seed: int = 0):
        self.n, self.chunks = n, max(n // 3, 1)
        rng = np.random.default_rng(seed)
        self.words = _words(rng, 4096)
        self.keywords = self.words[:300]
        self.centers = _unit(rng.standard_normal((64, DIM)))
        self.edges = _edges(rng, n)
        self.seed = seed

    def name(self, i: int) -> str:
        p = (i * 2654435761) % (len(self.words) ** 2)
        return f"{self.words[p % 4096].title()} {self.words[p // 4096].title()}"

    def chunk_id(self, j: int) -> str:
        return "chunk-" + hashlib.md5(str(j).encode()).hexdigest()

    def sources(self, i: int) -> list[str]:
        return [self.chunk_id((i * 7919 + k * 104729) % self.chunks) for k in range(1 + i % 3)]

    def rng(self, part: str, lo: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, lo, len(part)])

    def vectors(self, texts: list[str], rng: np.random.Generator, weight: float) -> np.ndarray:
        """Hashed words of ``texts`` (``weight``) plus a noisy cluster centre."""
        words = np.stack([fake_vector(t, DIM) for t in texts])
        centre = self.centers[rng.integers(0, len(self.centers), len(texts))]
        cluster = _unit(centre + 0.7 * _unit(rng.standard_normal((len(texts), DIM))))
        return _unit(weight * words + np.sqrt(1 - weight**2) * cluster).astype(np.float32)


def _words(rng: np.random.Generator, count: int) -> list[str]:
    out: dict[str, None] = {}
    while len(out) < count:
        out["".join(rng.choice(SYLLABLES, int(rng.integers(2, 4))))] = None
    return list(out)


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


def _edges(rng: np.random.Generator, n: int) -> list[tuple[int, int]]:
    """About 2n distinct undirected pairs: one end Zipf-like, the other uniform."""
    weights = 1.0 / (np.arange(n) + ZIPF_OFFSET)
    a = rng.choice(n, 2 * n, p=weights / weights.sum())
    b = rng.integers(0, n, 2 * n)
    pairs = {(int(min(x, y)), int(max(x, y))) for x, y in zip(a, b, strict=False) if x != y}
    return sorted(pairs)


# -- building ------------------------------------------------------------------


async def build(storage: SQLiteStorage, syn: Synthetic) -> None:
    start = time.perf_counter()
    for lo in range(0, syn.chunks, BATCH):
        async with storage.transaction():
            await _chunks(storage, syn, lo, min(lo + BATCH, syn.chunks))
    for lo in range(0, syn.n, BATCH):
        async with storage.transaction():
            await _entities(storage, syn, lo, min(lo + BATCH, syn.n))
    for lo in range(0, len(syn.edges), BATCH):
        async with storage.transaction():
            await _relations(storage, syn, syn.edges[lo : lo + BATCH], lo)
    await storage.set_meta("bench_index", {"n": syn.n, "seed": syn.seed})
    print(
        f"built {syn.n:,} entities, {len(syn.edges):,} edges, {syn.chunks:,} chunks "
        f"in {time.perf_counter() - start:.0f} s"
    )


async def _chunks(storage: SQLiteStorage, syn: Synthetic, lo: int, hi: int) -> None:
    rng = syn.rng("chunks", lo)
    texts, rows = [], {}
    for j in range(lo, hi):
        words = [syn.words[k] for k in rng.integers(0, len(syn.words), 30)]
        names = [syn.name(int(k)) for k in rng.integers(0, syn.n, 3)]
        texts.append(f"{names[0]} met {names[1]} near {names[2]}. " + " ".join(words) + ".")
        rows[syn.chunk_id(j)] = {
            "content": texts[-1],
            "tokens": len(texts[-1]) // 4,
            "doc_id": f"doc-{j // 20}",
            "order": j % 20,
            "file_path": f"docs/{j // 20}.md",
        }
    ids = list(rows)
    await storage.kv("text_chunks").upsert(rows)
    await storage.vectors("chunks").upsert(
        ids,
        syn.vectors(texts, rng, 0.7),
        [{"doc_id": rows[i]["doc_id"], "file_path": rows[i]["file_path"]} for i in ids],
    )
    await storage.lexical.add(dict(zip(ids, texts, strict=False)))


async def _entities(storage: SQLiteStorage, syn: Synthetic, lo: int, hi: int) -> None:
    rng = syn.rng("entities", lo)
    names = [syn.name(i) for i in range(lo, hi)]
    nodes = {}
    for i, name in zip(range(lo, hi), names, strict=False):
        kind = TYPES[i % len(TYPES)]
        nodes[name] = {
            "entity_type": kind,
            "description": f"{name} is a {kind.lower()} seen near {syn.words[i % 4096]}.",
            "source_ids": syn.sources(i),
            "file_paths": [f"docs/{i % 500}.md"],
            "extractor": "llm",
            "created_at": 0,
        }
    await storage.graph.upsert_nodes(nodes)
    ids = ["ent-" + hashlib.md5(n.encode()).hexdigest() for n in names]
    await storage.vectors("entities").upsert(
        ids, syn.vectors(names, rng, 0.8), [{"name": n} for n in names]
    )


async def _relations(
    storage: SQLiteStorage, syn: Synthetic, pairs: list[tuple[int, int]], lo: int
) -> None:
    rng = syn.rng("relations", lo)
    edges, texts = {}, []
    for x, y in pairs:
        a, b = edge_key(syn.name(x), syn.name(y))
        kw = ", ".join(sorted({syn.keywords[(x * 31 + y) % 300], syn.keywords[(x + y * 17) % 300]}))
        edges[(a, b)] = {
            "src": a,
            "tgt": b,
            "weight": float(1 + (x + y) % 4),
            "keywords": kw,
            "description": f"{a} and {b} are linked by {kw}.",
            "directions": [[a, b]],
            "source_ids": syn.sources(x)[:1],
            "file_paths": [f"docs/{x % 500}.md"],
            "extractor": "llm",
            "created_at": 0,
        }
        texts.append(f"{kw}\t{a}\n{b}")
    await storage.graph.upsert_edges(edges)
    ids = ["rel-" + hashlib.md5(f"{a}\x1f{b}".encode()).hexdigest() for a, b in edges]
    await storage.vectors("relations").upsert(
        ids, syn.vectors(texts, rng, 0.7), [{"src": a, "tgt": b} for a, b in edges]
    )


# -- querying --------------------------------------------------------------------


def questions(syn: Synthetic, count: int, seed: int = 7) -> list[tuple[str, list[str], list[str]]]:
    """(question, ll_keywords, hl_keywords); popular (hub) entities are asked about more."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / (np.arange(syn.n) + ZIPF_OFFSET)
    out = []
    for _ in range(count):
        low = [syn.name(int(i)) for i in rng.choice(syn.n, 2, p=weights / weights.sum())]
        high = [syn.keywords[int(k)] for k in rng.integers(0, len(syn.keywords), 2)]
        out.append((f"How does {low[0]} relate to {low[1]} in terms of {high[0]}?", low, high))
    return out


async def timed(coro) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = await coro
    return time.perf_counter() - wall, time.process_time() - cpu, result


def ask(engine: QueryEngine, mode: str, q: tuple[str, list[str], list[str]], data: bool):
    question, low, high = q
    param = QueryParam(mode=mode, only_need_context=True, ll_keywords=low, hl_keywords=high)
    return engine.query_data(question, param) if data else engine.query(question, param)


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) * 1e3


async def measure(workdir: Path, syn: Synthetic, args: argparse.Namespace) -> None:
    options = {"vector_screen_rows": args.screen_rows} if args.screen_rows else {}
    storage = SQLiteStorage(workdir, **options)
    await storage.open()
    engine = QueryEngine(storage, None, EmbeddingService(FakeEmbeddingProvider(dim=DIM)))
    qs = questions(syn, args.queries)
    wall, cpu, _ = await timed(ask(engine, "mix", qs[0], args.data))
    print(
        f"first query after open (mix, loads every vector namespace): {wall:.2f} s wall, {cpu:.2f} s CPU"
    )
    print(
        f"{'mode':8} {'first':>9} {'p50 wall':>9} {'p95 wall':>9} {'p50 CPU':>9} {'p95 CPU':>9}"
        f"  (ms, {len(qs)} queries; first: ppr loads its stored walk graph)"
    )
    for mode in args.modes:
        first, _, _ = await timed(ask(engine, mode, qs[0], args.data))
        for q in qs[1:3]:
            await ask(engine, mode, q, args.data)  # warm caches
        runs = [await timed(ask(engine, mode, q, args.data)) for q in qs]
        walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
        print(
            f"{mode:8} {first * 1e3:9.0f} {pct(walls, 50):9.1f} {pct(walls, 95):9.1f} {pct(cpus, 50):9.1f} "
            f"{pct(cpus, 95):9.1f}"
        )
    if args.screen_rows:
        await screen_recall(workdir, storage, qs)
    await storage.close()


async def screen_recall(workdir: Path, screened: SQLiteStorage, qs: list) -> None:
    """Recall of the screened vector searches against exact ones, per namespace."""
    exact = SQLiteStorage(workdir)
    await exact.open()
    embed = FakeEmbeddingProvider(dim=DIM)
    texts = {
        "entities": [", ".join(q[1]) for q in qs],
        "relations": [", ".join(q[2]) for q in qs],
        "chunks": [q[0] for q in qs],
    }
    for ns, k in (("entities", 40), ("relations", 40), ("chunks", 20)):
        found = []
        for vector in await embed.embed(texts[ns]):
            want = {h.id for h in await exact.vectors(ns).query(vector, k)}
            got = {h.id for h in await screened.vectors(ns).query(vector, k)}
            found.append(len(want & got) / max(len(want), 1))
        print(f"screen recall@{k} {ns:9}: mean {np.mean(found):.3f}, worst {min(found):.3f}")
    await exact.close()


def vector_search_only(rows: int, screen_rows: int, queries: int = 40) -> None:
    """Exact (and screened) search of an in-memory matrix of ``rows`` clustered unit vectors."""
    rng = np.random.default_rng(0)
    centres = _unit(rng.standard_normal((256, DIM)))
    index = MatrixIndex(DIM, screen_rows=screen_rows or rows)
    start = time.process_time()
    for lo in range(0, rows, 100_000):
        size = min(100_000, rows - lo)
        block = centres[rng.integers(0, len(centres), size)] + 0.8 * _unit(
            rng.standard_normal((size, DIM))
        )
        index.upsert([f"v{i}" for i in range(lo, lo + size)], _unit(block).astype(np.float32))
    print(
        f"{rows:,} x {DIM} rows in memory ({index.nbytes / 2**20:,.0f} MiB), built in "
        f"{time.process_time() - start:.1f} s CPU"
    )
    qs = _unit(
        centres[rng.integers(0, len(centres), queries)] + rng.standard_normal((queries, DIM))
    )
    for label, screen in (("exact", 0), ("screened", index.screen_rows)):
        index.screen_rows = screen
        index.search(qs[0].astype(np.float32), 40)  # a screen is fitted on first use
        runs = [_clock(lambda q=q: index.search(q.astype(np.float32), 40)) for q in qs]
        print(
            f"  {label:8} top-40: p50 {pct([r[0] for r in runs], 50):.1f} ms wall, "
            f"{pct([r[1] for r in runs], 50):.1f} ms CPU"
        )


def _clock(fn) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


async def main(args: argparse.Namespace) -> None:
    if args.vector_rows:
        vector_search_only(args.vector_rows, args.screen_rows)
        return
    workdir = Path(args.workdir or Path(tempfile.gettempdir()) / f"kgrag-bench-{args.n}")
    syn = Synthetic(args.n, args.seed)
    storage = SQLiteStorage(workdir)
    await storage.open()
    ready = await storage.get_meta("bench_index") == {"n": args.n, "seed": args.seed}
    if not ready:
        if await storage.graph.node_count():
            raise SystemExit(f"{workdir} holds another index; give an empty --workdir")
        await build(storage, syn)
    if await walk_store.read_head(storage) is None:  # built without commits: store it once
        async with storage.transaction():
            await walk_store.rewrite(storage)
    await storage.close()
    await measure(workdir, syn, args)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="entities (default 100,000)")
    parser.add_argument(
        "--workdir",
        help="where the index is built once and reused (default: <tmp>/kgrag-bench-<n>)",
    )
    parser.add_argument("--queries", type=int, default=40, help="timed queries per mode")
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument(
        "--data", action="store_true", help="time query_data instead of query(context)"
    )
    parser.add_argument(
        "--screen-rows",
        type=int,
        default=0,
        help="storage option vector_screen_rows (approximate pre-screen; 0: exact)",
    )
    parser.add_argument(
        "--vector-rows",
        type=int,
        default=0,
        help="only time exact and screened search over this many in-memory vectors",
    )
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
