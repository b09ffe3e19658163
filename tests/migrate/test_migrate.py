"""``migrate()`` between two SQLite working directories: the copy, resuming, refusals."""

from __future__ import annotations

import fcntl
import json
from pathlib import Path

import numpy as np
import pytest

from kgrag.errors import ConfigError, StorageError
from kgrag.maintenance.migrate import Batch, MigrateOptions, migrate
from kgrag.maintenance.migrate_steps import MIGRATION_KEY
from kgrag.storage.layout import CHUNKS
from kgrag.storage.sqlite import SQLiteStorage

from .helpers import build_index, export_text


class Stop(Exception):
    """The failure a test injects."""


@pytest.fixture(scope="module")
def other_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second, different index."""
    root = tmp_path_factory.mktemp("migrate-other")
    return build_index(root / "other", root / "docs", count=2)


def by_score(hit: tuple[str, float]) -> tuple[float, str]:
    return (-hit[1], hit[0])  # equal scores may come in either order


async def copy(source: Path, target: Path, **options: object) -> None:
    async with SQLiteStorage(source) as src, SQLiteStorage(target) as dst:
        assert (await migrate(src, dst, MigrateOptions(**options))).ok


async def test_the_copy_holds_every_role_alike(source_index, tmp_path):
    async with SQLiteStorage(source_index) as src, SQLiteStorage(tmp_path / "copy") as dst:
        report = await migrate(src, dst, MigrateOptions(batch_size=5, verify=True))
        assert report.ok and report.exports_equal and not report.resumed
        assert report.source_counts == report.target_counts
        assert {
            "kv:text_chunks",
            "vectors:chunks",
            "lexical",
            "doc_status",
        } <= report.source_counts.keys()
        assert min(report.source_counts.values()) > 0
        assert await export_text(src) == await export_text(dst)
        for ns in await src.vector_namespaces():
            ids = await src.vectors(ns).ids()
            assert await dst.vectors(ns).ids() == ids
            ours, theirs = (
                await src.vectors(ns).get_vectors(ids),
                await dst.vectors(ns).get_vectors(ids),
            )
            assert all(np.allclose(ours[i], theirs[i], atol=1e-6) for i in ids)
            assert await dst.vectors(ns).get_metas(ids) == await src.vectors(ns).get_metas(ids)
        for key in await src.meta_keys():
            if key != MIGRATION_KEY:
                assert await dst.get_meta(key) == await src.get_meta(key), key
        hits = [await side.lexical.search("Zurich report", 100) for side in (src, dst)]
        assert (
            hits[0]
            and [sorted(h, key=by_score) for h in hits] == [sorted(hits[0], key=by_score)] * 2
        )
        assert await dst.doc_status.next_seq() == await src.doc_status.next_seq()


async def test_an_interrupted_copy_resumes_after_its_last_committed_batch(source_index, tmp_path):
    seen: list[Batch] = []

    def stop_within_a_step(batch: Batch) -> None:
        seen.append(batch)
        if len(seen) >= 3 and batch.done < batch.total:
            raise Stop

    async with SQLiteStorage(source_index) as src, SQLiteStorage(tmp_path / "copy") as dst:
        with pytest.raises(Stop):
            await migrate(src, dst, MigrateOptions(batch_size=4, on_batch=stop_within_a_step))
        first = list(seen)
        record = await dst.get_meta(MIGRATION_KEY)
        assert (record["step"], record["after"], record["finished"]) == (
            first[-1].step,
            first[-1].last,
            False,
        )
        seen.clear()
        report = await migrate(
            src, dst, MigrateOptions(batch_size=4, on_batch=seen.append, verify=True)
        )
    assert report.resumed and report.ok and report.exports_equal
    assert seen[0].step == first[-1].step and seen[0].first > first[-1].last
    assert seen[0].done == first[-1].done + seen[0].size
    assert sum(b.size for b in first + seen) == sum(report.source_counts.values())
    assert report.batches == len(seen)


async def test_a_batch_that_fails_is_rolled_back_with_its_progress(
    source_index, tmp_path, monkeypatch
):
    async with SQLiteStorage(source_index) as src, SQLiteStorage(tmp_path / "copy") as dst:
        upsert, calls = dst.graph.upsert_edges, []

        async def fail_second(edges):
            calls.append(sorted(edges))
            await upsert(edges)  # written, then undone with the transaction
            if len(calls) == 2:
                raise Stop

        monkeypatch.setattr(dst.graph, "upsert_edges", fail_second)
        with pytest.raises(Stop):
            await migrate(src, dst, MigrateOptions(batch_size=8))
        assert await dst.graph.edge_count() == len(calls[0])
        monkeypatch.undo()
        seen: list[Batch] = []
        report = await migrate(src, dst, MigrateOptions(batch_size=8, on_batch=seen.append))
        assert report.ok and await export_text(src) == await export_text(dst)
    failed = min(json.dumps(list(pair), ensure_ascii=False) for pair in calls[1])
    assert (seen[0].step, seen[0].first) == ("graph.edges", failed)


async def test_a_finished_copy_run_again_copies_nothing(source_index, tmp_path):
    await copy(source_index, tmp_path / "copy")
    async with SQLiteStorage(source_index) as src, SQLiteStorage(tmp_path / "copy") as dst:
        report = await migrate(src, dst)
    assert report.already_done and report.ok and report.batches == 0 and not report.copied


async def test_a_target_holding_another_index_is_refused_unless_overwritten(
    source_index, other_index, tmp_path
):
    target = tmp_path / "copy"
    await copy(other_index, target)
    async with SQLiteStorage(source_index) as src, SQLiteStorage(target) as dst:
        before = await export_text(dst)
        with pytest.raises(ConfigError, match="already holds an index that was not migrated"):
            await migrate(src, dst)
        assert await export_text(dst) == before
        await dst.kv("stray").upsert({"k": {"v": 1}})
        await dst.set_meta("stray", 1)
        report = await migrate(src, dst, MigrateOptions(overwrite=True, verify=True))
        assert report.ok and report.exports_equal
        assert "stray" not in await dst.kv_namespaces() and await dst.get_meta("stray") is None
    async with SQLiteStorage(other_index) as other, SQLiteStorage(tmp_path / "fresh") as fresh:
        await fresh.kv("notes").upsert({"k": {}})  # not an index, but not empty either
        with pytest.raises(ConfigError, match="--overwrite"):
            await migrate(other, fresh)


async def test_a_source_changed_since_its_copy_began_is_refused(source_index, tmp_path):
    source = tmp_path / "source"
    await copy(source_index, source)
    async with SQLiteStorage(source) as src, SQLiteStorage(tmp_path / "copy") as dst:
        with pytest.raises(Stop):
            await migrate(src, dst, MigrateOptions(batch_size=2, on_batch=_raise))
        await src.kv(CHUNKS).upsert({"new-chunk": {"content": "x"}})
        with pytest.raises(StorageError, match="changed since its copy"):
            await migrate(src, dst)
        assert (await migrate(src, dst, MigrateOptions(overwrite=True, verify=True))).ok


def _raise(batch: Batch) -> None:
    raise Stop


async def test_both_writer_leases_are_held_while_copying(source_index, tmp_path):
    busy: list[bool] = []

    def try_locks(batch: Batch) -> None:
        for folder in (source_index, tmp_path / "copy"):
            with open(folder / "kgrag.lock", "a") as f:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    busy.append(False)
                except BlockingIOError:
                    busy.append(True)

    await copy(source_index, tmp_path / "copy", on_batch=try_locks)
    assert busy and all(busy)


async def test_the_same_store_on_both_sides_is_refused(source_index):
    async with SQLiteStorage(source_index) as one, SQLiteStorage(source_index) as two:
        with pytest.raises(ConfigError, match="the same index"):
            await migrate(one, two)


async def test_sqlite_lists_its_namespaces_and_meta_keys_sorted(tmp_path):
    async with SQLiteStorage(tmp_path) as s:
        for ns in ("b", "a", "gone"):
            await s.kv(ns).upsert({"k": {"v": 1}})
        await s.kv("gone").delete(["k"])
        for ns in ("v2", "v1"):
            await s.vectors(ns).upsert(["i"], np.ones((1, 3), np.float32), [{}])
        await s.set_meta("z", 1)
        await s.set_meta("m", 2)
        assert await s.kv_namespaces() == ["a", "b"]
        assert await s.vector_namespaces() == ["v1", "v2"]
        assert await s.meta_keys() == ["m", "schema_version", "z"]
