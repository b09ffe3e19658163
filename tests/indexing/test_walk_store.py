"""The stored walk graph follows every commit: patched, it is the graph built afresh."""

from __future__ import annotations

import numpy as np
import pytest

from kgrag.api.facade import KGRag
from kgrag.knowledge.walk import store as walk_store
from kgrag.knowledge.walk.graph import WalkGraph, differences
from kgrag.knowledge.walk.rows import build
from kgrag.knowledge.walk.store import WalkReader, graph_version, replay
from kgrag.storage.layout import WALK, WALK_LOG

from .lifecycle_corpus import document, lifecycle_settings, write


async def stored(rag: KGRag) -> WalkGraph:
    graph = await replay(rag.storage, None, await graph_version(rag.storage))
    assert graph is not None
    return graph


async def assert_same_as_fresh(rag: KGRag) -> WalkGraph:
    """The stored graph (snapshot + log) equals the one built from the store's rows."""
    have = await stored(rag)
    want = await build(rag.storage, await graph_version(rag.storage))
    assert differences(have, want) == []
    assert have.entities and have.version == want.version
    assert np.array_equal(have.ec, want.ec) and np.array_equal(have.ee, want.ee)
    assert np.allclose(have.sim, want.sim, atol=1e-6) and np.any(want.sim != 0)
    return have


def paths(tmp_path, n: int = 4):
    docs = tmp_path / "docs"
    return docs, [write(docs, f"d{i}.txt", document([i, i + 1, i + 2])) for i in range(n)]


async def test_index_supersede_and_delete_keep_the_stored_graph_fresh(tmp_path):
    docs, files = paths(tmp_path)
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        await rag.index_paths(files[:1])  # the first commit stores the snapshot
        for f in files[1:]:
            await rag.index_paths([f])
        assert len(await rag.storage.kv(WALK_LOG).keys()) >= 3  # later commits only log
        await assert_same_as_fresh(rag)
        write(docs, "d0.txt", document([0, 1, 2], version=1, edited={1}))
        await rag.index_paths([files[0]])
        await assert_same_as_fresh(rag)
        await rag.delete([str(files[1])])
        graph = await assert_same_as_fresh(rag)
        assert (await rag.check()).ok
    assert len(graph.chunks) == 4 + 2  # paragraphs 0-5 less those only d1 had


async def test_a_reader_patches_its_graph_at_each_commit(tmp_path):
    _, files = paths(tmp_path)
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        await rag.index_paths(files[:2])
        reader = WalkReader(rag.storage)
        first, changed = await reader.current()
        assert changed and (await reader.current()) == (first, False)
        await rag.index_paths(files[2:])
        await rag.delete([str(files[0])])
        patched, changed = await reader.current()
        assert changed and patched is not first
        assert differences(patched, await build(rag.storage, patched.version)) == []
        assert set(first.entities) != set(patched.entities)


async def test_commits_rewrite_the_snapshot_once_the_log_is_long(tmp_path, monkeypatch):
    monkeypatch.setattr(walk_store, "COMPACT_MIN", 10)
    _, files = paths(tmp_path, 6)
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        reader = WalkReader(rag.storage)
        versions = []
        for f in files:
            await rag.index_paths([f])
            versions.append((await walk_store.read_head(rag.storage)).version)
            await reader.current()
        assert len(set(versions)) > 2  # rewritten more than once
        assert len(await rag.storage.kv(WALK_LOG).keys()) < len(files)
        await assert_same_as_fresh(rag)
        assert differences(reader.graph, await stored(rag)) == []


async def test_check_reports_a_stale_graph_and_repair_rewrites_it(tmp_path):
    _, files = paths(tmp_path, 2)
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        await rag.index_paths(files)
        graph = await stored(rag)
        graph.ec, graph.sim = graph.ec[1:], graph.sim[1:]  # a pair lost
        await walk_store.save(rag.storage, graph)
        report = await rag.check()
        assert report.problems == [
            f"walk graph: {len(graph.ec)} entity-chunk pairs, the graph gives {len(graph.ec) + 1}"
        ]
        assert (await rag.check(repair=True)).ok
        await assert_same_as_fresh(rag)


async def test_a_version_missing_from_the_log_falls_back_to_a_full_build(tmp_path):
    _, files = paths(tmp_path, 3)
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        for f in files:
            await rag.index_paths([f])
        log = rag.storage.kv(WALK_LOG)
        await log.delete((await log.keys())[:1])
        assert await replay(rag.storage, None, await graph_version(rag.storage)) is None
        [problem] = (await rag.check()).problems
        assert problem.startswith("walk graph: the log from version")
        reader = WalkReader(rag.storage)
        graph, _ = await reader.current()
        assert differences(graph, await build(rag.storage, graph.version)) == []
        assert await reader.current() == (graph, False)  # built once while nothing changes


async def test_rebuild_drops_the_stored_graph_and_stores_the_new_one(tmp_path):
    _, files = paths(tmp_path, 3)
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        await rag.index_paths(files)
        before = await stored(rag)
        await rag.rebuild()
        after = await assert_same_as_fresh(rag)
        assert after.version > before.version and after.entities == before.entities
        assert (await rag.check()).ok


@pytest.mark.parametrize("extractor", ["nlp", "llm"])
async def test_an_index_without_a_stored_graph_gets_one_at_its_next_commit(tmp_path, extractor):
    _, files = paths(tmp_path, 2)
    async with KGRag(lifecycle_settings(tmp_path / "idx", extractor=extractor)) as rag:
        await rag.index_paths(files[:1])
        await rag.storage.kv(WALK).delete(["head", "snapshot"])  # as written before it existed
        assert (await rag.check()).ok  # nothing stored: nothing to compare
        await rag.index_paths(files[1:])
        assert await walk_store.read_head(rag.storage) is not None
        await assert_same_as_fresh(rag)
