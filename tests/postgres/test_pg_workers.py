"""Many worker processes on one PostgreSQL workspace, as real processes.

The reference is a single ``kgrag index`` process on the embedded store:
the graph is a function of the documents, so four workers (killed with
``kill -9`` or not) must leave exactly its export.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.indexing.cli_processes import cli_env, command, export, kgrag, ok
from tests.support.postgres import fresh_workspace

NAMES = [
    "Ada Lovelace", "Charles Babbage", "Alan Turing", "Grace Hopper", "John Neumann",
    "Claude Shannon", "Edsger Dijkstra", "Donald Knuth", "Barbara Liskov", "Ken Thompson",
    "Dennis Ritchie", "Linus Torvalds", "Margaret Hamilton", "Tim Berners", "Vint Cerf",
]  # fmt: skip
PLACES = ["London", "Princeton", "Cambridge", "Zurich", "Boston", "Helsinki", "Geneva"]


def write_corpus(folder: Path, count: int, seed: int = 7) -> Path:
    """``count`` small documents whose names overlap, so workers merge the same entities."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        paragraphs = []
        for _ in range(2):
            a, b = rng.sample(NAMES, 2)
            place = rng.choice(PLACES)
            paragraphs.append(
                f"{a} worked with {b} in {place} on problem {i}. "
                f"{b} later wrote about {a} and {place}."
            )
        (folder / f"doc{i:03d}.txt").write_text("\n\n".join(paragraphs), encoding="utf-8")
    return folder


def pg_env(dsn: str, workspace: str) -> dict[str, str]:
    return cli_env(
        KGRAG_STORAGE="postgres", KGRAG_POSTGRES_DSN=dsn, KGRAG_POSTGRES_WORKSPACE=workspace
    )


def start_worker(cwd: Path, env: dict[str, str], *flags: str) -> subprocess.Popen:
    return subprocess.Popen(
        command("worker", "--workdir", cwd / "pg", "--exit-when-idle", *flags),
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(procs: list[subprocess.Popen], timeout: float = 600) -> None:
    for proc in procs:
        _out, err = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, f"worker exited {proc.returncode}:\n{err[-3000:]}"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """100 documents and the export of one embedded-store process indexing them."""
    root = tmp_path_factory.mktemp("corpus")
    docs = write_corpus(root / "docs", 100)
    ok("index", "--workdir", root / "ref", docs, cwd=root)
    return docs, export(root / "ref", root)


async def queue_state(dsn: str, workspace: str, tmp_path: Path) -> tuple[dict, int, dict]:
    from kgrag.storage.postgres import PostgresStorage

    storage = PostgresStorage(tmp_path, dsn=dsn, workspace=workspace)
    await storage.open()
    try:
        return (
            await storage.queue.commits(),
            await storage.queue.leases_held(),
            await storage.doc_status.counts(),
        )
    finally:
        await storage.close()


def test_four_workers_build_what_one_process_builds(corpus, pg_dsn, tmp_path):
    docs, reference = corpus
    env = pg_env(pg_dsn, fresh_workspace())
    queued = ok("enqueue", "--workdir", tmp_path / "pg", docs, cwd=tmp_path, env=env)
    assert queued.startswith("queued 100 document(s)")
    workers = [start_worker(tmp_path, env, "--concurrency", "4") for _ in range(4)]
    finish(workers)
    assert export(tmp_path / "pg", tmp_path, env=env) == reference
    workspace = env["KGRAG_POSTGRES_WORKSPACE"]
    commits, leases, counts = asyncio.run(queue_state(pg_dsn, workspace, tmp_path))
    assert sorted(set(commits.values())) == [1] and len(commits) == 100
    assert leases == 0
    assert counts.get("processed") == 100


def test_killed_workers_lose_nothing_and_merge_nothing_twice(corpus, pg_dsn, tmp_path):
    docs, reference = corpus
    env = pg_env(pg_dsn, fresh_workspace())
    ok("enqueue", "--workdir", tmp_path / "pg", docs, cwd=tmp_path, env=env)
    flags = ("--concurrency", "2", "--lease", "3")
    workers = [start_worker(tmp_path, env, *flags) for _ in range(4)]
    rng, kills = random.Random(3), 0
    deadline = time.monotonic() + 240
    while kills < 6 and time.monotonic() < deadline:
        time.sleep(rng.uniform(1.0, 2.5))
        alive = [w for w in workers if w.poll() is None]
        if not alive:
            break
        victim = rng.choice(alive)
        os.kill(victim.pid, signal.SIGKILL)
        victim.communicate()
        kills += 1
        workers = [w for w in workers if w is not victim]
        workers.append(start_worker(tmp_path, env, *flags))
    assert kills >= 3, "the workers finished before enough of them were killed"
    finish(workers)
    finish([start_worker(tmp_path, env, *flags)])  # picks up what expired last
    workspace = env["KGRAG_POSTGRES_WORKSPACE"]
    commits, leases, counts = asyncio.run(queue_state(pg_dsn, workspace, tmp_path))
    assert len(commits) == 100 and sorted(set(commits.values())) == [1]
    assert leases == 0
    assert counts.get("processed") == 100
    assert export(tmp_path / "pg", tmp_path, env=env) == reference


def test_the_worker_needs_a_store_with_a_queue(tmp_path):
    out = kgrag("worker", "--workdir", tmp_path / "w", "--exit-when-idle", cwd=tmp_path)
    assert out.returncode == 2
    assert "storage = postgres" in out.stderr


async def _consistent(rag) -> int:
    """Checks one moment of the index: every chunk's document is whole and processed.

    Commits only add here and each is one transaction, so reading the chunks
    first and the statuses after must find every chunk's document processed,
    with all its chunks stored: a half-merged document fails this.
    """
    from kgrag.storage.layout import CHUNKS
    from kgrag.types import DocStatus

    chunks = rag.storage.kv(CHUNKS)
    rows = dict(zip(keys := await chunks.keys(), await chunks.get_many(keys), strict=True))
    processed = {r.id: r for r in await rag.storage.doc_status.by_status(DocStatus.PROCESSED)}
    for cid, row in rows.items():
        assert row is not None
        for doc in row["doc_ids"]:
            assert doc in processed, f"chunk {cid} is stored but {doc} is not processed"
            missing = set(processed[doc].chunk_ids) - set(rows)
            assert not missing, f"{doc} is processed without its chunks {sorted(missing)}"
    return len(processed)


async def _query_loop(settings, workers: list[subprocess.Popen]) -> tuple[int, int]:
    from kgrag.api.facade import KGRag
    from kgrag.retrieval.param import QueryParam

    rag = KGRag(settings)
    await rag.open(create=True)
    queries, seen = 0, set()
    try:
        while any(w.poll() is None for w in workers) or queries < 3:
            for mode in ("local", "global", "mix", "naive", "ppr"):
                param = QueryParam(mode=mode, only_need_context=True)
                await rag.query("What did Ada Lovelace do in London?", param=param)
                queries += 1
            seen.add(await _consistent(rag))
    finally:
        await rag.close()
    return queries, len(seen)


def test_queries_during_indexing_see_whole_documents_only(corpus, pg_dsn, tmp_path):
    from kgrag.config.settings import Settings

    docs, reference = corpus
    workspace = fresh_workspace()
    env = pg_env(pg_dsn, workspace)
    ok("enqueue", "--workdir", tmp_path / "pg", docs, cwd=tmp_path, env=env)
    workers = [start_worker(tmp_path, env, "--concurrency", "2") for _ in range(3)]
    from tests.indexing.cli_processes import FAKE_ENV

    settings = Settings(
        workdir=tmp_path / "pg",
        storage="postgres",
        postgres_dsn=pg_dsn,
        postgres_workspace=workspace,
        **{k.removeprefix("KGRAG_").lower(): v for k, v in FAKE_ENV.items()},
    )
    queries, moments = asyncio.run(_query_loop(settings, workers))
    finish(workers)
    assert queries >= 15
    assert moments >= 2, "every query ran before or after the indexing, not during it"
    assert export(tmp_path / "pg", tmp_path, env=env) == reference
