"""Conformance of transactions: all or nothing, and one writer at a time."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from kgrag.storage.base import Storage
from kgrag.storage.testing.common import StorageFixture, record
from kgrag.types import DocStatus


class TransactionConformance(StorageFixture):
    async def _write_everything(self, storage: Storage, tag: str) -> None:
        await storage.kv("docs").upsert({tag: {"v": tag}})
        await storage.vectors("ents").upsert([tag], np.array([[1.0, 2.0, 3.0]]), [{}])
        await storage.graph.upsert_nodes({tag: {}})
        await storage.graph.upsert_edges({(tag, "hub"): {}})
        await storage.doc_status.upsert([record(tag, DocStatus.PROCESSED, 1)])
        await storage.set_meta(tag, 1)
        if storage.lexical is not None:
            await storage.lexical.add({tag: f"word{tag}"})

    async def _present(self, storage: Storage, tag: str) -> list[bool]:
        hits = await storage.vectors("ents").query(np.array([1.0, 2.0, 3.0]), 5)
        found = [
            await storage.kv("docs").get(tag) is not None,
            tag in [h.id for h in hits],
            await storage.vectors("ents").get_vectors([tag]) != {},
            await storage.graph.get_node(tag) is not None,
            await storage.graph.get_edge(tag, "hub") is not None,
            await storage.doc_status.get(tag) is not None,
            await storage.get_meta(tag) is not None,
        ]
        if storage.lexical is not None:
            found.append(bool(await storage.lexical.search(f"word{tag}", 3)))
        return found

    async def test_commit_keeps_every_role(self, storage: Storage) -> None:
        async def body() -> None:
            async with storage.transaction():
                await self._write_everything(storage, "t1")

        await asyncio.wait_for(body(), 10)  # a deadlock fails instead of hanging
        assert all(await self._present(storage, "t1"))

    async def test_rollback_leaves_nothing(self, storage: Storage) -> None:
        await storage.vectors("ents").upsert(["base"], np.array([[1.0, 2.0, 3.0]]), [{}])
        await storage.vectors("ents").query(np.ones(3), 1)  # matrix now in memory

        async def body() -> None:
            async with storage.transaction():
                await self._write_everything(storage, "t2")
                async with storage.transaction():  # nested: joins the outer one
                    await storage.vectors("ents").delete(["base"])
                raise RuntimeError("fail the document")

        with pytest.raises(RuntimeError):
            await asyncio.wait_for(body(), 10)
        assert not any(await self._present(storage, "t2"))
        hits = await storage.vectors("ents").query(np.ones(3), 5)
        assert [h.id for h in hits] == ["base"]

    async def test_rollback_after_searching_inside_the_transaction(self, storage: Storage) -> None:
        vs = storage.vectors("ents")
        await vs.upsert(["base"], np.array([[1.0, 0.0]]), [{}])
        with pytest.raises(RuntimeError):
            async with storage.transaction():
                await vs.upsert(["tmp"], np.array([[1.0, 0.1]]), [{}])
                await vs.delete(["base"])
                await vs.query(np.array([1.0, 0.0]), 5)  # may load vectors now
                raise RuntimeError
        assert [h.id for h in await vs.query(np.array([1.0, 0.0]), 5)] == ["base"]
        await vs.upsert(["later"], np.array([[0.0, 1.0]]), [{}])
        assert [h.id for h in await vs.query(np.array([0.0, 1.0]), 5)] == ["later", "base"]

    # One writer at a time (SQLite): another task's write waits for an open
    # transaction. A backend with concurrent transactions (PostgreSQL) sets
    # this False: the write goes on beside it, and is kept all the same.
    writes_wait_for_transactions = True

    async def test_other_tasks_wait_and_keep_their_writes(self, storage: Storage) -> None:
        inside, release = asyncio.Event(), asyncio.Event()
        await storage.kv("docs").upsert({"before": {}})

        async def doomed() -> None:
            async with storage.transaction():
                await storage.kv("docs").upsert({"doomed": {}})
                inside.set()
                await release.wait()
                raise RuntimeError

        owner = asyncio.create_task(doomed())
        await inside.wait()
        assert await asyncio.wait_for(storage.kv("docs").get("before"), 5) == {}  # reads go on
        writer = asyncio.create_task(storage.kv("docs").upsert({"other": {}}))
        await asyncio.sleep(0.05)
        if self.writes_wait_for_transactions:
            assert not writer.done()  # waits for the transaction
        else:
            await asyncio.wait_for(writer, 5)  # goes on beside it
            assert await storage.kv("docs").missing(["other"]) == set()
        release.set()
        with pytest.raises(RuntimeError):
            await owner
        await asyncio.wait_for(writer, 5)
        assert await storage.kv("docs").missing(["doomed", "other"]) == {"doomed"}

    async def test_tasks_started_inside_join_the_transaction(self, storage: Storage) -> None:
        async def body() -> None:
            async with storage.transaction():
                await asyncio.gather(
                    storage.kv("docs").upsert({"g1": {}}),
                    storage.graph.upsert_nodes({"g2": {}}),
                    self._write_everything(storage, "g3"),
                )

        await asyncio.wait_for(body(), 10)
        assert await storage.kv("docs").get("g1") == {}
        assert all(await self._present(storage, "g3"))
