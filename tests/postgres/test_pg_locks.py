"""The workspace's advisory locks between two stores (two processes, as far as locks go)."""

from __future__ import annotations

import asyncio

import pytest

from kgrag.errors import WorkdirBusyError
from kgrag.storage.postgres import PostgresStorage


@pytest.fixture
async def twin(pg_storage, pg_dsn, tmp_path):
    other = PostgresStorage(tmp_path / "other", dsn=pg_dsn, workspace=pg_storage.workspace)
    await other.open()
    yield other
    await other.close()


async def test_a_waiter_queues_on_the_server_and_enters_when_freed(pg_storage, twin):
    told: list[str] = []
    entered = asyncio.Event()

    async def waiter() -> None:
        async with twin.writer(on_wait=told.append):
            entered.set()

    async with pg_storage.writer():
        task = asyncio.create_task(waiter())
        await asyncio.sleep(0.3)
        assert not entered.is_set() and len(told) == 1
        assert "being written by kgrag" in told[0]  # names the holder's application_name
    await asyncio.wait_for(task, 5)
    with pytest.raises(WorkdirBusyError):
        async with twin.writer():
            async with pg_storage.writer(wait=False):
                pass


async def test_a_waiter_cancelled_while_queued_leaves_no_lock_behind(pg_storage, twin):
    async with pg_storage.serial():
        task = asyncio.create_task(_enter(twin.serial()))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert await asyncio.wait_for(_enter(pg_storage.serial()), 5)
    assert await asyncio.wait_for(_enter(twin.serial()), 5)


async def test_shared_holders_exclude_an_exclusive_one(pg_storage, twin):
    async with pg_storage.writer(shared=True), twin.writer(shared=True, wait=False):
        with pytest.raises(WorkdirBusyError):
            async with (
                PostgresStorage(twin.workdir, dsn=twin.db.dsn, workspace=twin.workspace) as third,
                third.writer(wait=False),
            ):
                pass


async def _enter(lock) -> bool:
    async with lock:
        return True
