"""Conformance of the writer lease: one holder at a time, re-entrant for its own tasks."""

from __future__ import annotations

import asyncio

import pytest

from kgrag.storage.base import Storage
from kgrag.storage.testing.common import StorageFixture


class WriterConformance(StorageFixture):
    async def test_writer_serialises_tasks(self, storage: Storage) -> None:
        log: list[str] = []

        async def job(name: str) -> None:
            async with storage.writer():
                log.append(f"{name} in")
                await asyncio.sleep(0.05)
                await storage.kv("docs").upsert({name: {}})
                log.append(f"{name} out")

        await asyncio.wait_for(asyncio.gather(job("a"), job("b"), job("c")), 10)
        order = [entry.split()[0] for entry in log[::2]]
        assert log == [f"{name} {step}" for name in order for step in ("in", "out")]
        assert await storage.kv("docs").keys() == ["a", "b", "c"]

    async def test_writer_is_reentrant_for_its_task_and_children(self, storage: Storage) -> None:
        async def child(name: str) -> None:
            async with storage.writer(wait=False):  # already held: no waiting
                await storage.kv("docs").upsert({name: {}})

        async def body() -> None:
            async with storage.writer():
                async with storage.writer(), storage.transaction():  # nested: no wait
                    await asyncio.gather(child("g1"), child("g2"))
                await asyncio.create_task(child("t1"))

        await asyncio.wait_for(body(), 10)  # a deadlock fails instead of hanging
        assert await storage.kv("docs").keys() == ["g1", "g2", "t1"]

    async def test_writer_is_released_on_error_and_cancel(self, storage: Storage) -> None:
        with pytest.raises(RuntimeError):
            async with storage.writer():
                raise RuntimeError("boom")
        entered = asyncio.Event()

        async def holder() -> None:
            async with storage.writer():
                entered.set()
                await asyncio.sleep(60)

        task = asyncio.create_task(holder())
        await entered.wait()
        waiter = asyncio.create_task(self._enter(storage))
        await asyncio.sleep(0.05)
        assert not waiter.done()  # waits for the holder
        task.cancel()
        assert await asyncio.wait_for(waiter, 10) is True

    async def test_writer_does_not_block_readers(self, storage: Storage) -> None:
        await storage.kv("docs").upsert({"k": {"v": 1}})
        async with storage.writer():
            reader = asyncio.create_task(storage.kv("docs").get("k"))
            assert await asyncio.wait_for(reader, 5) == {"v": 1}

    @staticmethod
    async def _enter(storage: Storage) -> bool:
        async with storage.writer():
            return True
