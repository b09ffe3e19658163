"""``merge_groups``: many merges in one change give what merging them one by one gives."""

from __future__ import annotations

import pytest

from kgrag.api import KGRag, SyncKGRag
from kgrag.errors import CurationError, EntityNotFoundError

from .helpers import DOC_A, DOC_B, DOC_C, graph, insert, settings, sound, synthetic

# Chains and shared targets: a later group's target is an earlier group's source.
GROUPS = [
    ("Ebenezer Scrooge", ["Scrooge"]),
    ("Bob Cratchit", ["Cratchit"]),
    ("Scrooge", ["Fezziwig Company"]),  # Scrooge is an alias now: lands on Ebenezer Scrooge
    ("London", ["Ebenezer Scrooge"]),  # the whole group moves on to London
]


async def _one_by_one(
    rag: KGRag, groups: list[tuple[str, list[str]]], evidence: dict | None = None
) -> list[str]:
    return [await rag.merge_entities(t, s, evidence=evidence, origin="dedupe") for t, s in groups]


@pytest.mark.parametrize("groups", [GROUPS, GROUPS[:2]])
async def test_a_batch_equals_merging_one_by_one(tmp_path, groups):
    async with KGRag(settings(tmp_path / "one")) as rag:
        await insert(rag, a=DOC_A, b=DOC_B, c=DOC_C)
        before = await sound(rag)
        ids_one = await _one_by_one(rag, groups, {"score": 1.0})
        expected = await sound(rag)
    async with KGRag(settings(tmp_path / "batch")) as rag:
        await insert(rag, a=DOC_A, b=DOC_B, c=DOC_C)
        ids = await rag.merge_groups(groups, evidence=[{"score": 1.0}] * len(groups))
        assert ids == ids_one
        got = await sound(rag)
        assert got == expected
        assert [m["evidence"] for m in await rag.merges()] == [{"score": 1.0}] * len(groups)
        for mid in reversed(ids):
            await rag.unmerge(mid)
        assert await sound(rag) == before


async def test_a_synthetic_index_of_hundreds_of_merges(tmp_path):
    docs, groups = synthetic(60)
    async with KGRag(settings(tmp_path / "one")) as rag:
        await insert(rag, **docs)
        await _one_by_one(rag, groups)
        expected = await sound(rag)
    async with KGRag(settings(tmp_path / "batch")) as rag:
        await insert(rag, **docs)
        assert len(await rag.merge_groups(groups)) == len(groups)
        assert await sound(rag) == expected
        names = (await graph(rag))["entities"]
        assert all(short not in names for _, (short,) in groups)
        await insert(rag, **{k: v + " It rained." for k, v in list(docs.items())[:5]})
        await sound(rag)  # re-indexed documents still land on the targets


async def test_a_refused_group_writes_nothing(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await insert(rag, a=DOC_A, b=DOC_B)
        before = await sound(rag)
        with pytest.raises(EntityNotFoundError, match="Nobody"):
            await rag.merge_groups([("Ebenezer Scrooge", ["Scrooge"]), ("London", ["Nobody"])])
        with pytest.raises(CurationError, match="already merged"):
            await rag.merge_groups([("Ebenezer Scrooge", ["Scrooge"]), ("London", ["Scrooge"])])
        with pytest.raises(CurationError, match="2 groups"):
            await rag.merge_groups(
                [("London", ["Scrooge"]), ("Bob Cratchit", ["Cratchit"])], evidence=[None]
            )
        assert await sound(rag) == before and await rag.merges() == []
        assert await rag.merge_groups([]) == []


def test_sync_merge_groups(tmp_path):
    with SyncKGRag(settings(tmp_path / "idx")) as rag:
        rag.insert([DOC_A, DOC_B], ids=["a", "b"], file_paths=["a", "b"])
        ids = rag.merge_groups([("Ebenezer Scrooge", ["Scrooge"])], origin="manual")
        assert [(m["id"], m["origin"]) for m in rag.merges()] == [(ids[0], "manual")]
        assert rag.check().ok
