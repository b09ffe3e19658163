"""``split_entity``: a homonym separated by chunk, undone exactly, kept on re-indexing."""

from __future__ import annotations

import pytest

from kgrag.api.facade import KGRag
from kgrag.errors import CurationError, EntityNotFoundError
from kgrag.knowledge.curation import SplitNotFoundError
from kgrag.maintenance.export import dumps

from .helpers import DOC_A, graph, insert, settings, sound

# Two paragraphs (two chunks): the company and the fruit, both "Apple".
APPLE = "Apple sold phones in London.\n\nApple grew in the orchard of Bob Cratchit."


async def _chunk(rag: KGRag, text: str) -> str:
    data = await rag.export(timestamps=False)
    return next(c["id"] for c in data["chunks"] if text in c["content"])


async def test_a_split_separates_fragments_and_edges_by_chunk(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await insert(rag, a=DOC_A, p=APPLE)
        before = await sound(rag)
        fruit = await _chunk(rag, "orchard")
        sid = await rag.split_entity("Apple", {"Apple (fruit)": [fruit]})
        got = await graph(rag)
        after = await sound(rag)
        assert got["entities"]["Apple (fruit)"]["source_ids"] == [fruit]
        assert fruit not in got["entities"]["Apple"]["source_ids"]
        assert "orchard" in got["entities"]["Apple (fruit)"]["description"]
        assert "orchard" not in got["entities"]["Apple"]["description"]
        assert ("Apple (fruit)", "Bob Cratchit") in got["relations"]
        assert ("Apple", "Bob Cratchit") not in got["relations"]
        assert ("Apple", "London") in got["relations"]
        assert [s["id"] for s in await rag.splits()] == [sid]

        await insert(rag, p=APPLE + "\n\nApple fell.")  # a new version: the split chunk stays
        assert (await graph(rag))["entities"]["Apple (fruit)"]["source_ids"] == [fruit]
        await sound(rag)
        await insert(rag, p=APPLE)
        assert await sound(rag) == after
        await rag.delete(["p"])
        assert "Apple (fruit)" not in (await graph(rag))["entities"]
        await sound(rag)
        await insert(rag, p=APPLE)
        assert await sound(rag) == after
        await rag.rebuild()
        assert await sound(rag) == after

        await rag.unsplit(sid)
        assert await sound(rag) == before
        assert await rag.splits() == []


async def test_a_split_round_trips_through_export_and_import(tmp_path):
    async with KGRag(settings(tmp_path / "src")) as rag:
        await insert(rag, a=DOC_A, p=APPLE)
        await rag.split_entity("Apple", {"Apple (fruit)": [await _chunk(rag, "orchard")]})
        await rag.merge_entities("Bob Cratchit", ["Apple (fruit)"])  # a split name merges too
        expected = await sound(rag)
        export = await rag.export(timestamps=False)
    assert [s["name"] for s in export["curation"]["splits"]] == ["Apple"]
    path = tmp_path / "export.json"
    path.write_text(dumps(export), encoding="utf-8")
    async with KGRag(settings(tmp_path / "dst")) as rag:
        await rag.import_graph(path, source="kgrag")
        assert await sound(rag) == expected


async def test_refused_splits(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await insert(rag, a=DOC_A, p=APPLE)
        before = await sound(rag)
        fruit, firm = await _chunk(rag, "orchard"), await _chunk(rag, "phones")
        london = await _chunk(rag, "Ebenezer")
        with pytest.raises(EntityNotFoundError):
            await rag.split_entity("Pear", {"Pear (fruit)": [fruit]})
        with pytest.raises(CurationError, match="do not name"):
            await rag.split_entity("Apple", {"Apple (fruit)": [london]})
        with pytest.raises(CurationError, match="exists"):
            await rag.split_entity("Apple", {"London": [fruit]})
        with pytest.raises(CurationError, match="twice"):
            await rag.split_entity("Apple", {"Apple 1": [fruit], "Apple 2": [fruit, firm]})
        with pytest.raises(CurationError, match="needs"):
            await rag.split_entity("Apple", {})
        await rag.split_entity("Apple", {"Apple (fruit)": [fruit]})
        with pytest.raises(CurationError, match="twice"):
            await rag.split_entity("Apple", {"Apple (tree)": [fruit]})
        with pytest.raises(SplitNotFoundError):
            await rag.unsplit("s-nothing")
        mid = await rag.merge_entities("London", ["Apple"])
        with pytest.raises(CurationError, match="unmerge"):
            await rag.split_entity("Apple", {"Apple Inc": [firm]})
        await rag.unmerge(mid)
        await rag.unsplit((await rag.splits())[0]["id"])
        assert await sound(rag) == before
