"""Merging entities: edges re-pointed, parallel edges summed, self-loops dropped, undo."""

from __future__ import annotations

import pytest

from kgrag.api.facade import KGRag
from kgrag.errors import CurationError, EntityNotFoundError, MergeNotFoundError
from kgrag.ingest.ids import entity_vector_id, relation_vector_id

from .helpers import DOC_A, DOC_B, DOC_C, graph, insert, settings, sound


async def test_merge_repoints_edges_sums_parallel_ones_and_drops_self_loops(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await insert(rag, a=DOC_A, b=DOC_B)
        before = await graph(rag)
        assert ("London", "Scrooge") in before["relations"]
        assert ("Ebenezer Scrooge", "Scrooge") in before["relations"]
        mid = await rag.merge_entities("Ebenezer Scrooge", ["Scrooge"], evidence={"score": 0.97})
        after = await graph(rag)
        await sound(rag)
    assert "Scrooge" not in after["entities"]
    assert all("Scrooge" not in pair for pair in after["relations"])
    edge = after["relations"][("Ebenezer Scrooge", "London")]
    assert (
        edge["weight"]
        == before["relations"][("Ebenezer Scrooge", "London")]["weight"]
        + (before["relations"][("London", "Scrooge")]["weight"])
    )
    assert set(edge["source_ids"]) == set(
        before["relations"][("Ebenezer Scrooge", "London")]["source_ids"]
        + before["relations"][("London", "Scrooge")]["source_ids"]
    )
    assert ("Cratchit", "Ebenezer Scrooge") in after["relations"]  # re-pointed
    node = after["entities"]["Ebenezer Scrooge"]
    assert set(node["source_ids"]) == set(
        before["entities"]["Ebenezer Scrooge"]["source_ids"]
        + before["entities"]["Scrooge"]["source_ids"]
    )
    assert set(node["file_paths"]) == {"a", "b"}
    assert mid.startswith("m-")


async def test_merge_updates_the_vectors(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await insert(rag, a=DOC_A, b=DOC_B)
        ents, rels = rag.storage.vectors("entities"), rag.storage.vectors("relations")
        old = (await ents.get_vectors([entity_vector_id("Ebenezer Scrooge")]))[
            entity_vector_id("Ebenezer Scrooge")
        ]
        await rag.merge_entities("Ebenezer Scrooge", ["Scrooge"])
        assert not await ents.get_metas([entity_vector_id("Scrooge")])
        assert not await rels.get_metas([relation_vector_id("London", "Scrooge")])
        new = (await ents.get_vectors([entity_vector_id("Ebenezer Scrooge")]))[
            entity_vector_id("Ebenezer Scrooge")
        ]
        assert await rels.get_metas([relation_vector_id("Ebenezer Scrooge", "London")])
        await sound(rag)
    assert (old != new).any()  # the description now holds the alias's fragments


async def test_unmerge_restores_the_exact_export(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await insert(rag, a=DOC_A, b=DOC_B, c=DOC_C)
        before = await sound(rag)
        mid = await rag.merge_entities("Ebenezer Scrooge", ["Scrooge"], origin="dedupe")
        merged = await sound(rag)
        [record] = await rag.merges()
        assert record["id"] == mid and record["origin"] == "dedupe"
        assert record["target"] == "Ebenezer Scrooge" and record["sources"] == ["Scrooge"]
        await rag.unmerge(mid)
        assert await rag.merges() == []
        assert await sound(rag) == before != merged


async def test_chained_merges_resolve_and_undo_in_any_order(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await insert(rag, a=DOC_A, b=DOC_B)
        before = await sound(rag)
        first = await rag.merge_entities("Scrooge", ["Ebenezer Scrooge"])
        second = await rag.merge_entities("Cratchit", ["Scrooge"])  # an odd one, undone below
        assert "Ebenezer Scrooge" not in (await graph(rag))["entities"]
        await sound(rag)
        await rag.unmerge(first)
        nodes = (await graph(rag))["entities"]
        assert "Ebenezer Scrooge" in nodes and "Scrooge" not in nodes
        await sound(rag)
        await rag.unmerge(second)
        assert await sound(rag) == before


async def test_a_later_document_naming_the_alias_lands_on_the_target(tmp_path):
    async with KGRag(settings(tmp_path / "one")) as rag:
        await insert(rag, a=DOC_A, b=DOC_B)
        await rag.merge_entities("Ebenezer Scrooge", ["Scrooge"])
        await insert(rag, c=DOC_C)
        got = await graph(rag)
        merged_first = await sound(rag)
    assert "Scrooge" not in got["entities"]
    assert ("Ebenezer Scrooge", "Fezziwig Company") in got["relations"]
    async with KGRag(settings(tmp_path / "two")) as rag:
        await insert(rag, a=DOC_A, b=DOC_B, c=DOC_C)
        await rag.merge_entities("Ebenezer Scrooge", ["Scrooge"])
        assert await sound(rag) == merged_first


async def test_merge_then_delete_and_reindex_equals_merge_after_indexing(tmp_path):
    async with KGRag(settings(tmp_path / "one")) as rag:
        await insert(rag, a=DOC_A, b=DOC_B)
        await rag.merge_entities("Ebenezer Scrooge", ["Scrooge"])
        expected = await sound(rag)
        await rag.delete(["b"])
        without_b = await graph(rag)
        await sound(rag)
        await insert(rag, b=DOC_B)
        assert await sound(rag) == expected
    assert "Scrooge" not in without_b["entities"]


async def test_rebuild_reproduces_the_merged_graph(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await insert(rag, a=DOC_A, b=DOC_B)
        await rag.merge_entities("Ebenezer Scrooge", ["Scrooge", "Cratchit"])
        expected = await sound(rag)
        await rag.rebuild()
        assert await sound(rag) == expected


async def test_refused_merges(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await insert(rag, a=DOC_A, b=DOC_B)
        with pytest.raises(EntityNotFoundError):
            await rag.merge_entities("Nobody", ["Scrooge"])
        with pytest.raises(EntityNotFoundError):
            await rag.merge_entities("Scrooge", ["Nobody"])
        with pytest.raises(CurationError, match="nothing to merge"):
            await rag.merge_entities("Scrooge", ["Scrooge"])
        mid = await rag.merge_entities("Ebenezer Scrooge", ["Scrooge"])
        with pytest.raises(CurationError, match=mid):
            await rag.merge_entities("London", ["Scrooge"])
        with pytest.raises(CurationError, match="JSON"):
            await rag.merge_entities("London", ["Cratchit"], evidence={"x": object()})
        with pytest.raises(MergeNotFoundError):
            await rag.unmerge("m-nothing")
        await sound(rag)
