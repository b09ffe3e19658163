"""Benchmark the SQLite storage backend.

Vectors: upsert N random vectors in batches (one transaction per batch),
reopen, time the first query (which loads the matrix), then query latency,
and incremental upserts/deletes against the loaded matrix. Chunks: store
*A Christmas Carol* as ~4.8 KB chunks in a KV namespace and the BM25 index,
and report bytes per chunk and search latency.

    .venv/bin/python scripts/bench_storage.py --n 100000
    .venv/bin/python scripts/bench_storage.py --n 1000000 --dtype float16
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from kgrag.storage.sqlite import SQLiteStorage

BOOK = Path(__file__).resolve().parents[1] / "../shared/data/christmas_carol/book.txt"


def db_bytes(workdir: Path) -> int:
    """Size of the database plus its write-ahead log."""
    return sum(p.stat().st_size for p in workdir.glob("kgrag.db*"))


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def fill(storage: SQLiteStorage, n: int, dim: int, batch: int) -> float:
    """Upsert ``n`` vectors; returns seconds taken."""
    vs, rng = storage.vectors("entities"), np.random.default_rng(0)
    start = time.perf_counter()
    for lo in range(0, n, batch):
        size = min(batch, n - lo)
        ids = [f"ent-{i:032x}" for i in range(lo, lo + size)]
        rows = rng.standard_normal((size, dim), dtype=np.float32)
        await vs.upsert(ids, rows, [{"name": f"entity {i}"} for i in range(lo, lo + size)])
    return time.perf_counter() - start


async def timed(coro) -> tuple[float, object]:
    start = time.perf_counter()
    result = await coro
    return time.perf_counter() - start, result


async def bench_vectors(workdir: Path, args: argparse.Namespace) -> None:
    storage = SQLiteStorage(workdir, vector_dtype=args.dtype)
    await storage.open()
    seconds = await fill(storage, args.n, args.dim, args.batch)
    await storage.close()
    size = db_bytes(workdir)
    print(
        f"upsert   {args.n:,} x {args.dim} ({args.dtype} on disk): {seconds:.1f} s, "
        f"{args.n / seconds:,.0f} vectors/s; file {size / 2**20:,.0f} MiB, "
        f"{size / args.n:,.0f} bytes/vector"
    )

    storage = SQLiteStorage(workdir)
    await storage.open()
    vs, rng = storage.vectors("entities"), np.random.default_rng(1)
    load, _ = await timed(vs.query(rng.standard_normal(args.dim), 10))
    print(
        f"load     first query after reopen: {load:.2f} s "
        f"(matrix {vs._index.nbytes / 2**20:,.0f} MiB, max RSS {rss_mb():,.0f} MiB)"
    )
    for label, threshold in (("top-10", None), ("top-10 >= 0.2", 0.2)):
        times = [
            (await timed(vs.query(rng.standard_normal(args.dim), 10, threshold)))[0]
            for _ in range(args.queries)
        ]
        print(
            f"query    {label}: median {statistics.median(times) * 1e3:.1f} ms, "
            f"p95 {np.percentile(times, 95) * 1e3:.1f} ms"
        )
    await bench_incremental(vs, args)
    await storage.close()


async def bench_incremental(vs, args: argparse.Namespace) -> None:
    rng = np.random.default_rng(2)
    ids = [f"new-{i}" for i in range(args.batch)]
    rows = rng.standard_normal((args.batch, args.dim))
    up, _ = await timed(vs.upsert(ids, rows, [{}] * len(ids)))
    old = [f"ent-{i:032x}" for i in range(0, args.n, max(1, args.n // args.batch))][: args.batch]
    re, _ = await timed(vs.upsert(old, rows[: len(old)], [{}] * len(old)))
    rm, _ = await timed(vs.delete(old))
    print(
        f"update   on the loaded matrix, {args.batch} vectors per call: new {up * 1e3:.0f} ms, "
        f"overwrite {re * 1e3:.0f} ms, delete {rm * 1e3:.0f} ms"
    )


def book_chunks(size: int = 4800) -> dict[str, str]:
    text = BOOK.read_text(encoding="utf-8") if BOOK.exists() else "Bah! Humbug! " * 20000
    return {f"chunk-{i:04d}": text[i : i + size] for i in range(0, len(text), size)}


async def bench_chunks(workdir: Path) -> None:
    chunks = book_chunks()
    storage = SQLiteStorage(workdir)
    await storage.open()
    base = db_bytes(workdir)
    await storage.kv("text_chunks").upsert(
        {
            k: {
                "content": v,
                "tokens": 1200,
                "doc_id": "doc-x",
                "order": 0,
                "file_path": "book.txt",
            }
            for k, v in chunks.items()
        }
    )
    await storage.close()
    await storage.open()
    kv_size = db_bytes(workdir) - base
    await storage.lexical.add(chunks)
    await storage.close()
    await storage.open()
    lex_size = db_bytes(workdir) - base - kv_size
    raw = sum(len(v.encode()) for v in chunks.values()) / len(chunks)
    print(
        f"chunks   {len(chunks)} x {raw:,.0f} bytes of text: KV {kv_size / len(chunks):,.0f} "
        f"bytes/chunk, BM25 index {lex_size / len(chunks):,.0f} bytes/chunk"
    )
    times = [
        (await timed(storage.lexical.search(q, 10)))[0]
        for q in ["Scrooge Marley ghost", "Christmas pudding Cratchit", "Bah humbug"] * 10
    ]
    print(f"bm25     search: median {statistics.median(times) * 1e3:.2f} ms")
    await storage.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--dtype", choices=["float32", "float16"], default="float32")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        await bench_vectors(Path(tmp) / "vectors", args)
        await bench_chunks(Path(tmp) / "chunks")


if __name__ == "__main__":
    asyncio.run(main())
