"""Manual edits are inputs of the recompute: they survive re-indexing and document deletion."""

from __future__ import annotations

import pytest

from kgrag.api.facade import KGRag
from kgrag.curation.ops import Curator
from kgrag.errors import CurationError, EntityNotFoundError
from kgrag.knowledge.curation import MANUAL

from .helpers import DOC_A, DOC_B, DOC_C, graph, insert, settings, sound


async def test_edited_fields_survive_reindex_and_deletion_of_the_document(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await insert(rag, a=DOC_A, b=DOC_B)
        await rag.edit_entity("London", description="Capital city.", entity_type="Location")
        await rag.edit_relation("Bob Cratchit", "London", keywords="lives", weight=5)
        await sound(rag)
        await insert(rag, a=DOC_A + " London was foggy.")  # a new version of a
        got = await graph(rag)
        assert got["entities"]["London"]["description"] == "Capital city."
        assert got["relations"][("Bob Cratchit", "London")]["weight"] == 5.0
        await sound(rag)
        await rag.delete(["a"])
        got = await graph(rag)
        await sound(rag)
        assert got["entities"]["London"]["description"] == "Capital city."  # b still names it
        assert ("Bob Cratchit", "London") not in got["relations"]  # nothing supports it now
        await insert(rag, a=DOC_A)
        assert (await graph(rag))["relations"][("Bob Cratchit", "London")]["keywords"] == "lives"
        await rag.clear_entity_edits("London", ["description"])
        assert (await graph(rag))["entities"]["London"]["description"].startswith("London")
        await sound(rag)


async def test_manual_entities_and_relations_exist_without_documents(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await insert(rag, a=DOC_A)
        await rag.create_entity("Marley", "Person", "Scrooge's late partner.")
        await rag.create_relation("Marley", "Ebenezer Scrooge", keywords="partner", weight=2)
        got = await graph(rag)
        assert got["entities"]["Marley"]["source_ids"] == [MANUAL]
        assert got["entities"]["Marley"]["file_paths"] == [MANUAL]
        edge = got["relations"][("Ebenezer Scrooge", "Marley")]
        assert edge["weight"] == 2.0 and edge["keywords"] == "partner"
        expected = await sound(rag)
        await rag.delete(["a"])  # the relation keeps Ebenezer Scrooge as its endpoint
        got = await graph(rag)
        assert set(got["entities"]) == {"Ebenezer Scrooge", "Marley"}
        await sound(rag)
        await insert(rag, a=DOC_A)
        assert await sound(rag) == expected
        await rag.rebuild()
        assert await sound(rag) == expected
        with pytest.raises(CurationError, match="exists"):
            await rag.create_entity("Marley", "Person", "again")


async def test_a_deleted_entity_stays_deleted_until_restored(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await insert(rag, a=DOC_A, b=DOC_B)
        before = await sound(rag)
        await rag.delete_entity("London")
        got = await graph(rag)
        assert "London" not in got["entities"]
        assert all("London" not in pair for pair in got["relations"])
        deleted = await sound(rag)
        await insert(rag, c="Scrooge walked through London.")
        assert "London" not in (await graph(rag))["entities"]
        await rag.delete(["c"])
        assert await sound(rag) == deleted
        await rag.rebuild()
        assert await sound(rag) == deleted
        await rag.restore_entity("London")
        assert await sound(rag) == before
        with pytest.raises(EntityNotFoundError):
            await rag.restore_entity("London")


async def test_deleted_relation_and_restore(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await insert(rag, a=DOC_A)
        before = await sound(rag)
        await rag.delete_relation("London", "Bob Cratchit")
        got = await graph(rag)
        assert ("Bob Cratchit", "London") not in got["relations"]
        assert {"Bob Cratchit", "London"} <= set(got["entities"])
        await sound(rag)
        await rag.restore_relation("Bob Cratchit", "London")
        assert await sound(rag) == before


async def test_rename_is_a_recorded_merge_and_later_mentions_follow(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await insert(rag, a=DOC_A)
        await rag.edit_entity("Bob Cratchit", description="A clerk.")
        mid = await rag.rename_entity("Bob Cratchit", "Robert Cratchit")
        [record] = await rag.merges()
        assert record["id"] == mid and record["origin"] == "rename"
        got = await graph(rag)
        assert "Bob Cratchit" not in got["entities"]
        assert got["entities"]["Robert Cratchit"]["description"] == "A clerk."  # carried over
        assert ("Ebenezer Scrooge", "Robert Cratchit") in got["relations"]
        await insert(rag, c="Bob Cratchit visited Fezziwig Company.")
        assert ("Fezziwig Company", "Robert Cratchit") in (await graph(rag))["relations"]
        await sound(rag)
        with pytest.raises(CurationError, match="already exists"):
            await rag.rename_entity("London", "Robert Cratchit")


async def test_edits_on_unknown_names_are_refused(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await insert(rag, a=DOC_A, c=DOC_C)
        with pytest.raises(EntityNotFoundError):
            await rag.edit_entity("Nobody", description="x")
        with pytest.raises(EntityNotFoundError):
            await rag.delete_relation("London", "Fezziwig Company")
        with pytest.raises(CurationError, match="editable"):
            await Curator(rag.storage, rag.indexer.applier).edit_entity("London", {"weight": 1})
        await sound(rag)
