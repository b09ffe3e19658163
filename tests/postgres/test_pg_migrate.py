"""``kgrag migrate`` through PostgreSQL: SQLite -> PostgreSQL -> SQLite keeps the index."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kgrag.api.blocking import SyncKGRag
from kgrag.cli.main import main
from kgrag.errors import ConfigError
from kgrag.maintenance.export import dumps
from kgrag.maintenance.migrate import Batch, MigrateOptions, migrate
from kgrag.storage.postgres import PostgresStorage
from kgrag.storage.sqlite import SQLiteStorage
from tests.indexing.lifecycle_corpus import lifecycle_settings
from tests.migrate.helpers import answer, build_index, export_text, model_calls, sqlite_export
from tests.support.postgres import fresh_workspace


class Stop(Exception):
    """The failure a test injects."""


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small SQLite index in a folder of a fresh name (the default workspace's)."""
    root = tmp_path_factory.mktemp("pg-migrate")
    return build_index(root / fresh_workspace("src"), root / "docs")


def drop(dsn: str, workspace: str) -> None:
    async def run() -> None:
        storage = PostgresStorage(Path("."), dsn=dsn, workspace=workspace)
        await storage.open()
        await storage.drop()

    asyncio.run(run())


def test_a_round_trip_through_postgres_keeps_the_index(
    source, pg_dsn, tmp_path, monkeypatch, capsys
):
    workspace, back = source.name, tmp_path / "back"
    pg = lifecycle_settings(
        tmp_path / "pg", storage="postgres", postgres_dsn=pg_dsn, postgres_workspace=workspace
    )
    try:
        with model_calls(monkeypatch) as calls:
            there = ["migrate", "--from", f"sqlite:{source}", "--to", f"postgres:{pg_dsn}"]
            assert main([*there, "--verify", "--batch-size", "7"]) == 0
            home = ["--from", f"postgres:{pg_dsn}#{workspace}", "--to", f"sqlite:{back}"]
            assert main(["migrate", *home, "--verify"]) == 0
        assert not calls
        assert (
            capsys.readouterr().out.count("counts equal on both sides; canonical exports equal")
            == 2
        )
        assert sqlite_export(back) == sqlite_export(source)
        with SyncKGRag(pg) as rag:
            assert dumps(rag.export()) == sqlite_export(source)
        ours = answer(lifecycle_settings(source))  # after the copies: a query writes the ledger
        assert answer(pg) == ours and answer(lifecycle_settings(back)) == ours and ours[1]
    finally:
        drop(pg_dsn, workspace)


async def test_an_interrupted_copy_into_postgres_resumes(source, pg_dsn, tmp_path):
    seen: list[Batch] = []

    def stop_within_a_step(batch: Batch) -> None:
        seen.append(batch)
        if len(seen) >= 3 and batch.done < batch.total:
            raise Stop

    target = PostgresStorage(tmp_path, dsn=pg_dsn, workspace=fresh_workspace())
    async with SQLiteStorage(source) as src, target as dst:
        try:
            with pytest.raises(Stop):
                await migrate(src, dst, MigrateOptions(batch_size=4, on_batch=stop_within_a_step))
            first = list(seen)
            seen.clear()
            options = MigrateOptions(batch_size=4, on_batch=seen.append, verify=True)
            report = await migrate(src, dst, options)
            assert report.resumed and report.ok and report.exports_equal
            assert seen[0].step == first[-1].step and seen[0].first > first[-1].last
            assert sum(b.size for b in first + seen) == sum(report.source_counts.values())
            assert (await migrate(src, dst)).already_done
        finally:
            await dst.drop()


async def test_a_failed_batch_into_postgres_is_rolled_back_with_its_progress(
    source, pg_dsn, tmp_path, monkeypatch
):
    target = PostgresStorage(tmp_path, dsn=pg_dsn, workspace=fresh_workspace())
    async with SQLiteStorage(source) as src, target as dst:
        try:
            upsert, calls = dst.graph.upsert_nodes, []

            async def fail_second(nodes):
                calls.append(sorted(nodes))
                await upsert(nodes)  # written, then undone with the transaction
                if len(calls) == 2:
                    raise Stop

            monkeypatch.setattr(dst.graph, "upsert_nodes", fail_second)
            with pytest.raises(Stop):
                await migrate(src, dst, MigrateOptions(batch_size=5))
            assert sorted(await dst.graph.all_node_names()) == calls[0]
            monkeypatch.undo()
            seen: list[Batch] = []
            report = await migrate(src, dst, MigrateOptions(batch_size=5, on_batch=seen.append))
            assert report.ok and await export_text(src) == await export_text(dst)
            assert (seen[0].step, seen[0].first) == ("graph.nodes", calls[1][0])
        finally:
            await dst.drop()


async def test_a_postgres_workspace_holding_something_is_refused_unless_overwritten(
    source, pg_dsn, tmp_path
):
    target = PostgresStorage(tmp_path, dsn=pg_dsn, workspace=fresh_workspace())
    async with SQLiteStorage(source) as src, target as dst:
        try:
            await dst.kv("notes").upsert({"mine": {"v": 1}})
            await dst.set_meta("settings", {"chunk_size": 1})
            with pytest.raises(ConfigError, match="already holds an index"):
                await migrate(src, dst)
            assert await dst.kv("notes").keys() == ["mine"]
            report = await migrate(src, dst, MigrateOptions(overwrite=True, verify=True))
            assert report.ok and report.exports_equal
            assert "notes" not in await dst.kv_namespaces()
            assert await dst.get_meta("settings") == await src.get_meta("settings")
        finally:
            await dst.drop()


def test_the_command_names_the_workspace_with_a_flag_and_refuses_a_foreign_one(
    source, pg_dsn, tmp_path, capsys
):
    workspace = fresh_workspace()
    argv = ["migrate", "--to", f"postgres:{pg_dsn}", "--workspace", workspace]
    try:
        assert main([*argv, "--from", f"sqlite:{source}", "--json"]) == 0
        other = build_index(tmp_path / "other", tmp_path / "docs", count=2)
        capsys.readouterr()
        assert main([*argv, "--from", f"sqlite:{other}"]) == 2
        assert "already holds an index that was not migrated from" in capsys.readouterr().err
        assert main([*argv, "--from", f"sqlite:{other}", "--overwrite", "--verify"]) == 0
        pg = lifecycle_settings(
            tmp_path / "pg", storage="postgres", postgres_dsn=pg_dsn, postgres_workspace=workspace
        )
        with SyncKGRag(pg) as rag:
            assert dumps(rag.export()) == sqlite_export(other)
    finally:
        drop(pg_dsn, workspace)
