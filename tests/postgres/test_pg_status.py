"""The PostgreSQL document status table beyond the conformance suite: queue columns, seq numbers."""

from __future__ import annotations

import asyncio

import pytest

from kgrag.storage.postgres import PostgresStorage
from kgrag.storage.testing.common import record
from kgrag.types import DocStatus


async def _queue_state(conn, doc_id: str) -> tuple:
    cur = await conn.execute(
        "SELECT status, lease_owner, lease_until IS NOT NULL, attempts, commits "
        "FROM doc_status WHERE id = %s",
        (doc_id,),
    )
    return await cur.fetchone()


async def _lease(conn, doc_id: str) -> None:
    """What a worker's claim and commit leave on a row."""
    await conn.execute(
        "UPDATE doc_status SET status = 'processing', lease_owner = 'worker-1', "
        "lease_until = now() + interval '1 minute', attempts = 3, commits = 2 WHERE id = %s",
        (doc_id,),
    )


async def test_pg_status_upsert_keeps_counts_and_ends_the_lease_unless_processing(pg_storage):
    ds, db = pg_storage.doc_status, pg_storage.db
    await ds.upsert([record("a", DocStatus.PENDING, 1)])
    assert await db.read(_queue_state, "a") == ("pending", None, False, 0, 0)
    await db.write(_lease, "a")
    await ds.upsert([record("a", DocStatus.PROCESSING, 1)])
    assert await db.read(_queue_state, "a") == ("processing", "worker-1", True, 3, 2)
    await ds.upsert([record("a", DocStatus.PENDING, 5)])  # enqueued again: the lease ends
    assert await db.read(_queue_state, "a") == ("pending", None, False, 3, 2)
    await db.write(_lease, "a")
    await ds.upsert([record("a", DocStatus.PROCESSED, 5)])
    assert await db.read(_queue_state, "a") == ("processed", None, False, 3, 2)
    assert (await ds.get("a")).status == DocStatus.PROCESSED


async def test_pg_status_next_seq_is_unique_across_processes(pg_storage, pg_dsn, tmp_path):
    ds = pg_storage.doc_status
    await ds.upsert([record("a", DocStatus.PENDING, 40)])
    other = PostgresStorage(tmp_path, dsn=pg_dsn, workspace=pg_storage.workspace)
    await other.open()
    try:
        calls = [s.doc_status.next_seq() for _ in range(30) for s in (pg_storage, other)]
        seqs = await asyncio.gather(*calls)
    finally:
        await other.close()
    assert len(set(seqs)) == len(seqs) == 60 and min(seqs) > 40


async def test_pg_status_next_seq_inside_a_transaction_sees_its_own_upserts(pg_storage):
    ds = pg_storage.doc_status
    async with pg_storage.transaction():
        await ds.upsert([record("a", DocStatus.PENDING, 1000)])
        assert await ds.next_seq() > 1000
    with pytest.raises(RuntimeError):
        async with pg_storage.transaction():
            await ds.upsert([record("b", DocStatus.PENDING, 5000)])
            raise RuntimeError("roll back")
    assert 1000 < await ds.next_seq() < 5000


async def test_pg_status_orders_ties_by_id_as_python_sorts(pg_storage):
    ids = ["b", "B", "a", "_x", "é", "Z9"]
    await pg_storage.doc_status.upsert(
        [record(i, DocStatus.PENDING, 7) for i in ids] + [record("first", DocStatus.PENDING, 2)]
    )
    got = await pg_storage.doc_status.by_status(DocStatus.PENDING)
    assert [r.id for r in got] == ["first", *sorted(ids)]


async def test_pg_status_has_the_queue_index(pg_storage):
    async def indexes(conn) -> list[str]:
        cur = await conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() "
            "AND tablename = 'doc_status'"
        )
        return [row[0] for row in await cur.fetchall()]

    assert any("(status, enqueue_seq)" in d for d in await pg_storage.db.read(indexes))
