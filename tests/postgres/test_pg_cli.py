"""The command line as real processes with ``KGRAG_STORAGE=postgres``, beside the embedded store.

The same commands run against an SQLite workdir and a PostgreSQL workspace
(index, query, status, docs, check, delete, export); their outputs must
agree but for timings, timestamps, the workdir and the backend's name.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.indexing.cli_processes import cli_env, command, kgrag
from tests.support.postgres import fresh_workspace

from .twins import BACKENDS, QUESTION, Corpus, drop_workspace, run, write_corpus

TIMINGS = ("seconds", "wall_s", "insert_s")


@dataclass(frozen=True)
class Cli:
    """One backend's commands: its environment and workdir."""

    cwd: Path
    env: dict[str, str]
    workdir: Path

    def run(self, name: str, *args: str | Path) -> subprocess.CompletedProcess:
        return kgrag(name, "--workdir", self.workdir, *args, cwd=self.cwd, env=self.env)

    def ok(self, name: str, *args: str | Path) -> str:
        out = self.run(name, *args)
        assert out.returncode == 0, f"kgrag {name} exited {out.returncode}:\n{out.stderr[-4000:]}"
        return out.stdout

    def json(self, name: str, *args: str | Path) -> Any:
        return json.loads(self.ok(name, "--json", *args).splitlines()[-1])

    def export(self, name: str) -> bytes:
        target = self.cwd / f"{self.workdir.name}-{name}.json"
        self.ok("export", "--no-timestamps", "--output", target)
        return target.read_bytes()


def pg_env(dsn: str, workspace: str, **extra: str) -> dict[str, str]:
    return cli_env(
        KGRAG_STORAGE="postgres",
        KGRAG_POSTGRES_DSN=dsn,
        KGRAG_POSTGRES_WORKSPACE=workspace,
        **extra,
    )


def session(cli: Cli, corpus: Corpus) -> dict[str, Any]:
    """Every command of the session, in order; what each printed."""
    out: dict[str, Any] = {"index": cli.json("index", "--no-progress", corpus.folder)}
    out["export"] = cli.export("indexed")
    for mode in ("mix", "ppr"):
        out[f"context {mode}"] = cli.ok("query", "--mode", mode, "--context-only", QUESTION)
    out["answer"] = cli.ok("query", QUESTION)
    out["status"] = cli.json("status")
    out["docs"] = cli.json("docs", "--limit", "100")
    out["delete"] = cli.json("delete", corpus.red[1])
    out["deleted"] = cli.export("deleted")
    out["check"] = cli.json("check")
    return out


@pytest.fixture(scope="module")
def sessions(pg_dsn, tmp_path_factory) -> dict[str, dict[str, Any]]:
    root = tmp_path_factory.mktemp("pg-cli")
    corpus = write_corpus(root / "docs")
    workspace = fresh_workspace("c")
    clis = {
        "sqlite": Cli(root, cli_env(), root / "sqlite"),
        "postgres": Cli(root, pg_env(pg_dsn, workspace), root / "postgres"),
    }
    try:
        with ThreadPoolExecutor(len(BACKENDS)) as pool:  # two processes at a time
            done = {b: pool.submit(session, clis[b], corpus) for b in BACKENDS}
            return {b: done[b].result() for b in BACKENDS}
    finally:
        run(drop_workspace(pg_dsn, workspace))


def untimed(value: Any) -> Any:
    """``value`` without timings and update times (they differ from run to run)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in (*TIMINGS, "updated_at")}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


@pytest.mark.parametrize(
    "name",
    [
        "index",
        "export",
        "context mix",
        "context ppr",
        "answer",
        "docs",
        "delete",
        "deleted",
        "check",
    ],
)
def test_each_command_prints_the_same_on_both_backends(sessions, name):
    ours, theirs = (sessions[b][name] for b in BACKENDS)
    assert untimed(theirs) == untimed(ours)
    assert theirs


def test_the_session_did_something(sessions):
    pg = sessions["postgres"]
    assert pg["index"]["new"] == 6 and pg["index"]["processed"] == 6
    assert pg["check"]["ok"] and pg["docs"]["total"] == 6
    assert len(pg["delete"]["deleted"]) == 1 and pg["deleted"] != pg["export"]
    assert "Alice Moreau" in pg["context mix"] and pg["answer"].strip()


def test_status_is_the_same_but_for_the_backend(sessions):
    ours, theirs = (dict(sessions[b]["status"]) for b in BACKENDS)
    storage = theirs.pop("storage")
    assert storage["backend"] == "postgres" and storage["workspace"].startswith("c")
    assert storage["queue"] == {"pending": 0, "leased": 0, "expired": 0}
    assert ours.pop("storage") == {"backend": "sqlite"}
    for status in (ours, theirs):
        status.pop("workdir")
        status.pop("llm")  # this process's model calls: none, or answers from the cache
    assert untimed(theirs) == untimed(ours)
    assert theirs["documents"]["processed"]["count"] == 6


def test_a_command_that_reads_refuses_a_workspace_that_does_not_exist(pg_dsn, tmp_path):
    workspace = fresh_workspace("none")
    cli = Cli(tmp_path, pg_env(pg_dsn, workspace), tmp_path / "pg")
    for args in (("status",), ("query", QUESTION), ("docs",), ("export", "--output", "x.json")):
        out = cli.run(*args)
        assert out.returncode == 2, out.stderr
        assert "no index at" in out.stderr
    assert not run(workspace_exists(pg_dsn, workspace))
    assert not (tmp_path / "pg").exists()


async def workspace_exists(dsn: str, workspace: str) -> bool:
    from kgrag.storage.postgres import PostgresStorage

    return await PostgresStorage(Path("."), dsn=dsn, workspace=workspace).exists()


def test_reset_if_settings_changed_empties_the_workspace(pg_dsn, tmp_path):
    docs = write_corpus(tmp_path / "docs")
    workspace = fresh_workspace("r")
    before = Cli(tmp_path, pg_env(pg_dsn, workspace), tmp_path / "pg")
    after = Cli(tmp_path, pg_env(pg_dsn, workspace, KGRAG_EMBEDDING_DIM="32"), before.workdir)
    try:
        before.ok("index", "--no-progress", *docs.red)
        refused = after.run("index", "--no-progress", *docs.blue)
        assert refused.returncode == 2 and "embedding_dim=384 in the index but 32" in refused.stderr
        reset = after.run(
            "index", "--json", "--no-progress", "--reset-if-settings-changed", *docs.blue
        )
        assert reset.returncode == 0, reset.stderr
        assert "embedding_dim 384 -> 32" in reset.stderr and "emptied the index" in reset.stderr
        assert json.loads(reset.stdout.splitlines()[-1])["new"] == 3
        status = after.json("status")
        assert status["embedding"] == "fake-embed:32"
        assert status["documents"]["processed"]["count"] == 3  # the red ones are gone
        again = after.run("index", "--no-progress", "--reset-if-settings-changed", *docs.blue)
        assert again.returncode == 0 and "emptied" not in again.stderr
    finally:
        run(drop_workspace(pg_dsn, workspace))


def test_a_busy_workspace_names_the_process_holding_it(pg_dsn, tmp_path):
    from kgrag.api.facade import KGRag

    from .twins import pg_settings

    workspace = fresh_workspace("b")
    cli = Cli(tmp_path, pg_env(pg_dsn, workspace), tmp_path / "pg")
    docs = write_corpus(tmp_path / "docs")
    cli.ok("index", "--no-progress", docs.red[0])

    async def while_held() -> subprocess.CompletedProcess:
        async with KGRag(pg_settings(cli.workdir, pg_dsn, workspace)) as rag, rag.writing():
            return await asyncio.to_thread(
                subprocess.run,
                command("delete", "--workdir", cli.workdir, "--no-wait", docs.red[0]),
                cwd=tmp_path,
                env=cli.env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )

    try:
        out = run(while_held())
        assert out.returncode != 0
        assert f"kgrag_{workspace} is being written by" in out.stderr
        assert f"pid {os.getpid()}" in out.stderr
        assert cli.json("docs")["total"] == 1  # nothing was deleted
    finally:
        run(drop_workspace(pg_dsn, workspace))
