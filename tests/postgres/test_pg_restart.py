"""Workers and a long-lived store survive a PostgreSQL restart.

The postmaster of a private server is killed (``SIGKILL`` of its process
group, as a crash or an OOM kill does) while three ``kgrag worker``
processes index a corpus through a fake model with some latency, then
started again on the same folder and socket. The workers reconnect and
carry on: every document is committed once, no lease is left, and the
export equals one embedded-store process's (the graph is a function of
the documents). One worker runs without ``--exit-when-idle``: it stays
up through the restart and stops on SIGTERM, releasing its leases.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.indexing.cli_processes import cli_env, command, export, ok
from tests.postgres.restartable import RestartablePostgres, restartable
from tests.postgres.test_pg_workers import queue_state, write_corpus
from tests.support.postgres import ENV, fresh_workspace
from tests.synth import run_synth

DOCS = 60
pytestmark = pytest.mark.skipif(
    bool(os.environ.get(ENV)),
    reason="kills its own server: not the one KGRAG_TEST_POSTGRES_DSN names",
)


@pytest.fixture(scope="module")
def private_pg():
    with tempfile.TemporaryDirectory(prefix="kgre") as folder, restartable(Path(folder)) as pg:
        yield pg


def synth_env(base_url: str, **extra: str) -> dict[str, str]:
    """The fake-model CLI settings, with chat and embeddings sent to the synth server."""
    return cli_env(
        KGRAG_LLM_PROVIDER="openai",
        KGRAG_LLM_BASE_URL=base_url,
        KGRAG_LLM_API_KEY="t",
        KGRAG_EMBEDDING_PROVIDER="openai",
        KGRAG_EMBEDDING_BASE_URL=base_url,
        KGRAG_EMBEDDING_API_KEY="t",
        **extra,
    )


def _count(dsn: str, schema: str, sql: str) -> int | None:
    """One number from the workspace, on a connection of its own (None: no answer)."""
    import psycopg

    try:
        with psycopg.connect(dsn, connect_timeout=2, autocommit=True) as conn:
            row = conn.execute(sql.format(schema=schema)).fetchone()
            return int(row[0]) if row else None
    except psycopg.Error:
        return None


PROCESSED = "SELECT count(*) FROM {schema}.doc_status WHERE status = 'processed'"
COMMITS = "SELECT coalesce(sum(commits), 0) FROM {schema}.doc_status"


def _wait_for(probe, condition, timeout: float, step: float = 0.05) -> float:
    """Seconds until ``condition(probe())`` held; fails after ``timeout``."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        value = probe()
        if value is not None and condition(value):
            return time.monotonic() - started
        time.sleep(step)
    raise AssertionError(f"not within {timeout} s (last: {probe()})")


def _worker(cwd: Path, env: dict[str, str], *flags: str) -> subprocess.Popen:
    return subprocess.Popen(
        command("worker", "--workdir", cwd / "pg", "--concurrency", "2", *flags),
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _restart(pg: RestartablePostgres, schema: str, outage_s: float) -> tuple[int, float]:
    """Kill and restart the server; (commits when it was killed, s from restart to a commit)."""
    commits = _count(pg.dsn, schema, COMMITS)
    assert commits is not None
    pg.kill()
    time.sleep(outage_s)
    pg.start()
    baseline = _count(pg.dsn, schema, COMMITS)
    assert baseline is not None and baseline >= commits  # a commit is durable once acknowledged
    took = _wait_for(lambda: _count(pg.dsn, schema, COMMITS), lambda n: n > baseline, 60)
    return commits, took


def test_three_workers_carry_on_through_a_postgres_restart(private_pg, tmp_path):
    docs = write_corpus(tmp_path / "docs", DOCS, seed=11)
    workspace = fresh_workspace("r")
    schema = f"kgrag_{workspace}"
    with run_synth("--latency", "0.25") as base_url:
        reference_env = synth_env(base_url)
        ok(
            "index",
            "--no-progress",
            "--workdir",
            tmp_path / "ref",
            docs,
            cwd=tmp_path,
            env=reference_env,
        )
        reference = export(tmp_path / "ref", tmp_path, env=reference_env)
        env = synth_env(
            base_url,
            KGRAG_STORAGE="postgres",
            KGRAG_POSTGRES_DSN=private_pg.dsn,
            KGRAG_POSTGRES_WORKSPACE=workspace,
        )
        ok("enqueue", "--workdir", tmp_path / "pg", docs, cwd=tmp_path, env=env)
        idle = [_worker(tmp_path, env, "--exit-when-idle") for _ in range(2)]
        daemon = _worker(tmp_path, env)  # without --exit-when-idle: it must stay up
        workers = [*idle, daemon]
        _wait_for(lambda: _count(private_pg.dsn, schema, PROCESSED), lambda n: n >= 6, 120)
        at_kill, took = _restart(private_pg, schema, outage_s=2.0)
        print(
            f"\nrestart -> first commit: {took:.2f} s ({at_kill} of {DOCS} committed at the kill)"
        )
        assert at_kill < DOCS, "the workers finished before the kill"
        assert took < 30
        outs = [w.communicate(timeout=300) for w in idle]
        assert daemon.poll() is None, "the worker without --exit-when-idle stopped"
        daemon.send_signal(signal.SIGTERM)
        outs.append(daemon.communicate(timeout=60))
    codes = [w.returncode for w in workers]
    assert codes == [0, 0, 128 + signal.SIGTERM], [err[-3000:] for _, err in outs]
    for _out, err in outs:
        assert "Traceback" not in err, err[-3000:]
        assert len(err.splitlines()) <= 4, err[-3000:]  # lost, connected again, (SIGTERM)
    commits, leases, counts = asyncio.run(queue_state(private_pg.dsn, workspace, tmp_path))
    assert len(commits) == DOCS and sorted(set(commits.values())) == [1]
    assert leases == 0
    assert counts.get("processed") == DOCS
    assert export(tmp_path / "pg", tmp_path, env=env) == reference


def test_the_server_answers_and_indexes_after_a_postgres_restart(private_pg, tmp_path):
    from kgrag.server.access.accounts import add_account
    from tests.postgres.test_pg_server import KEY, SECRET, TEXTS, USER, _start, _stop, wait_job
    from tests.postgres.test_pg_server import ok as answered
    from tests.postgres.test_pg_workers import pg_env

    accounts = tmp_path / "accounts.json"
    add_account(accounts, *USER, ["*"])
    env = pg_env(private_pg.dsn, fresh_workspace("s"))
    serving = _start(
        tmp_path / "a", env | {"KGRAG_API_KEY": KEY, "KGRAG_JWT_SECRET": SECRET}, accounts
    )
    question = {
        "query": "Who worked with Ada Lovelace?",
        "mode": "local",
        "only_need_context": True,
    }
    try:
        client = serving.client
        wait_job(
            client, answered(client.post("/documents/texts", json={"texts": TEXTS[:2]}))["job_id"]
        )
        before = answered(client.post("/query", json=question))
        counts = answered(client.get("/documents/status_counts"))
        private_pg.kill()
        time.sleep(1.0)
        private_pg.start()
        after = answered(client.post("/query", json=question))  # the pool connected again
        assert after["response"] == before["response"]
        assert answered(client.get("/documents/status_counts")) == counts
        sent = answered(client.post("/documents/texts", json={"texts": TEXTS[2:]}))
        assert len(wait_job(client, sent["job_id"])["result"]["processed"]) == 2
    finally:
        _stop(serving)
    assert "Traceback" not in serving.stderr.text(), serving.stderr.text()[-3000:]


def test_a_worker_whose_database_stays_away_stops_with_one_line(private_pg, tmp_path):
    docs = write_corpus(tmp_path / "docs", 16, seed=5)
    workspace = fresh_workspace("g")
    schema = f"kgrag_{workspace}"
    with run_synth("--latency", "0.25") as base_url:
        env = synth_env(
            base_url,
            KGRAG_STORAGE="postgres",
            KGRAG_POSTGRES_DSN=private_pg.dsn,
            KGRAG_POSTGRES_WORKSPACE=workspace,
            KGRAG_POSTGRES_RECONNECT_S="3",
        )
        ok("enqueue", "--workdir", tmp_path / "pg", docs, cwd=tmp_path, env=env)
        worker = _worker(tmp_path, env, "--lease", "4")
        _wait_for(lambda: _count(private_pg.dsn, schema, PROCESSED), lambda n: n >= 2, 120)
        private_pg.kill()
        killed = time.monotonic()
        _out, err = worker.communicate(timeout=120)
        took = time.monotonic() - killed
        private_pg.start()
        print(f"\nthe database away: the worker stopped after {took:.1f} s:\n{err}")
        assert worker.returncode == 1, err[-3000:]
        assert "Traceback" not in err, err[-3000:]
        lines = err.splitlines()
        assert len(lines) <= 2, err[-3000:]  # lost the connection; the error
        assert lines[-1].startswith("kgrag: error: ") and "postgres_reconnect_s" in lines[-1]
        assert took < 30
        # its leases could not be released: they expire, and another worker takes over
        finisher = _worker(tmp_path, env, "--lease", "4", "--exit-when-idle")
        _out, err = finisher.communicate(timeout=300)
        assert finisher.returncode == 0, err[-3000:]
    commits, leases, counts = asyncio.run(queue_state(private_pg.dsn, workspace, tmp_path))
    assert len(commits) == 16 and sorted(set(commits.values())) == [1]
    assert leases == 0 and counts.get("processed") == 16


def test_a_terminated_worker_gives_its_documents_back(private_pg, tmp_path):
    docs = write_corpus(tmp_path / "docs", 12, seed=3)
    workspace = fresh_workspace("t")
    leased = f"SELECT count(*) FROM kgrag_{workspace}.doc_status WHERE lease_owner IS NOT NULL"
    with run_synth("--latency", "1.0") as base_url:
        env = synth_env(
            base_url,
            KGRAG_STORAGE="postgres",
            KGRAG_POSTGRES_DSN=private_pg.dsn,
            KGRAG_POSTGRES_WORKSPACE=workspace,
        )
        ok("enqueue", "--workdir", tmp_path / "pg", docs, cwd=tmp_path, env=env)
        worker = _worker(tmp_path, env)
        _wait_for(lambda: _count(private_pg.dsn, "", leased), lambda n: n >= 2, 120)
        worker.send_signal(signal.SIGTERM)
        _out, err = worker.communicate(timeout=60)
    assert worker.returncode == 128 + signal.SIGTERM, err[-3000:]
    assert err.splitlines() == [
        "kgrag: worker stopped (SIGTERM); its documents are back in the queue"
    ]
    assert _count(private_pg.dsn, "", leased) == 0  # a new worker need not wait for a lease
