"""Conformance of the document status store and the lexical (BM25) index."""

from __future__ import annotations

from typing import ClassVar

import pytest

from kgrag.storage.base import LexicalIndex, Storage
from kgrag.storage.testing.common import StorageFixture, record
from kgrag.types import DocStatus


class DocStatusConformance(StorageFixture):
    async def test_doc_status_roundtrip(self, storage: Storage) -> None:
        ds, rec = storage.doc_status, record("doc-1", DocStatus.FAILED, 3)
        rec.error = "boom"
        await ds.upsert([rec])
        assert await ds.get("doc-1") == rec
        assert await ds.get("doc-2") is None
        assert await ds.get_many(["doc-1", "doc-2"]) == {"doc-1": rec}

    async def test_doc_status_by_status_in_enqueue_order(self, storage: Storage) -> None:
        ds = storage.doc_status
        await ds.upsert(
            [
                record("c", DocStatus.PENDING, 3),
                record("a", DocStatus.PENDING, 1),
                record("b", DocStatus.PROCESSED, 2),
                record("d", DocStatus.FAILED, 0),
            ]
        )
        got = await ds.by_status(DocStatus.PENDING, DocStatus.FAILED)
        assert [r.id for r in got] == ["d", "a", "c"]
        counts = await ds.counts()
        assert counts["pending"] == 2 and counts["processed"] == 1 and counts["failed"] == 1
        assert counts.get("processing", 0) == 0
        await ds.upsert([record("a", DocStatus.PROCESSING, 1)])
        assert [r.id for r in await ds.by_status(DocStatus.PENDING)] == ["c"]

    async def test_doc_status_next_seq_never_repeats(self, storage: Storage) -> None:
        ds = storage.doc_status
        assert await ds.next_seq() >= 1
        await ds.upsert([record("a", DocStatus.PENDING, 7), record("b", DocStatus.PENDING, 4)])
        assert await ds.next_seq() > 7
        await ds.delete(["a"])
        assert await ds.get("a") is None
        assert await ds.next_seq() > 7


class LexicalConformance(StorageFixture):
    TEXTS: ClassVar[dict[str, str]] = {  # shared by every test: never modified
        "c1": "Scrooge was a squeezing, wrenching, grasping, covetous old sinner.",
        "c2": "Marley was dead: to begin with. Scrooge signed the register.",
        "c3": "The Cratchit family ate the Christmas pudding together.",
        "c4": "刘备与孙权联合，在赤壁大败曹操的军队。",
    }

    @pytest.fixture
    async def lexical(self, storage: Storage) -> LexicalIndex:
        if storage.lexical is None:
            pytest.skip("backend has no lexical index")
        await storage.lexical.add(self.TEXTS)
        index: LexicalIndex = storage.lexical
        return index

    async def test_lexical_ranks_matches(self, lexical: LexicalIndex) -> None:
        hits = await lexical.search("covetous old SINNER Scrooge", 10)
        assert [i for i, _ in hits][:2] == ["c1", "c2"] and len(hits) == 2
        assert all(s > 0 for _, s in hits) and hits[0][1] > hits[1][1]

    async def test_lexical_chinese(self, lexical: LexicalIndex) -> None:
        assert [i for i, _ in await lexical.search("曹操的军队在哪里", 5)] == ["c4"]
        assert [i for i, _ in await lexical.search("赤壁", 5)] == ["c4"]

    async def test_lexical_delete_and_replace(self, lexical: LexicalIndex) -> None:
        await lexical.delete(["c1"])
        await lexical.add({"c3": "Scrooge and the pudding"})
        assert {i for i, _ in await lexical.search("scrooge", 5)} == {"c2", "c3"}
        assert await lexical.search("cratchit", 5) == []

    async def test_lexical_ids_and_count_follow_changes(self, lexical: LexicalIndex) -> None:
        assert await lexical.ids() == sorted(self.TEXTS) and await lexical.count() == 4
        await lexical.delete(["c2"])
        await lexical.add({"c9": "new"})
        assert await lexical.ids() == ["c1", "c3", "c4", "c9"]

    @pytest.mark.parametrize(
        "query", ['"', "AND OR NOT", "a*", "(x", "col:umn", "  ", "-", "NEAR("]
    )
    async def test_lexical_odd_queries_do_not_fail(self, lexical: LexicalIndex, query: str) -> None:
        assert isinstance(await lexical.search(query, 3), list)
