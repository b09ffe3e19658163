"""The document status table, with the columns the work queue leases by.

Columns for what is searched or sorted (``status``, ``enqueue_seq``) plus
the whole :class:`~kgrag.types.DocRecord` as JSON in ``data``. The work
queue (:mod:`kgrag.storage.postgres.queue`) adds its own state to each row:
``lease_owner`` and ``lease_until`` (who works on the document, until
when), ``attempts`` and ``commits``. An upsert keeps ``attempts`` and
``commits`` of an existing row and clears the lease unless the record is
``processing``.

``doc_status_top`` is one row holding a number at least as large as every
``enqueue_seq`` ever stored (an upsert raises it, taking its row lock only
when it grows). :meth:`PgDocStatusStore.next_seq` increments it and
returns the new value, so two callers, in any processes, never get the
same number, and a number is never handed out again after a delete.
"""

from __future__ import annotations

from collections.abc import Iterable

from kgrag.storage.postgres import codec
from kgrag.storage.postgres.db import Conn, Database, chunked, scalar
from kgrag.types import DocRecord, DocStatus

DDL = """
CREATE TABLE IF NOT EXISTS doc_status (
    id          TEXT COLLATE "C" PRIMARY KEY,
    status      TEXT NOT NULL,
    enqueue_seq BIGINT NOT NULL,
    data        BYTEA NOT NULL,
    lease_owner TEXT NULL,
    lease_until TIMESTAMPTZ NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    commits     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS doc_status_status ON doc_status (status, enqueue_seq);
CREATE TABLE IF NOT EXISTS doc_status_top (
    one   BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    value BIGINT NOT NULL
);
INSERT INTO doc_status_top (one, value) VALUES (TRUE, 0) ON CONFLICT (one) DO NOTHING;
"""

_UPSERT = (
    "INSERT INTO doc_status (id, status, enqueue_seq, data) VALUES (%s, %s, %s, %s) "
    "ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, "
    "enqueue_seq = EXCLUDED.enqueue_seq, data = EXCLUDED.data, "
    "lease_owner = CASE WHEN EXCLUDED.status = 'processing' "
    "THEN doc_status.lease_owner END, "
    "lease_until = CASE WHEN EXCLUDED.status = 'processing' "
    "THEN doc_status.lease_until END"
)
_NEXT = (
    "INSERT INTO doc_status_top (one, value) VALUES (TRUE, 1) "
    "ON CONFLICT (one) DO UPDATE SET value = doc_status_top.value + 1 RETURNING value"
)


class PgDocStatusStore:
    """Per-document processing state."""

    def __init__(self, db: Database):
        self._db = db

    async def get(self, doc_id: str) -> DocRecord | None:
        return (await self.get_many([doc_id])).get(doc_id)

    async def get_many(self, doc_ids: list[str]) -> dict[str, DocRecord]:
        return await self._db.read(_select_ids, list(dict.fromkeys(doc_ids)))

    async def upsert(self, records: list[DocRecord]) -> None:
        """Store ``records`` (the last one wins for a repeated id), in id order."""
        last = {r.id: r for r in records}
        rows = [_row(last[doc_id]) for doc_id in sorted(last)]
        if rows:
            await self._db.write(_upsert, rows)

    async def by_status(self, *statuses: DocStatus) -> list[DocRecord]:
        """Records with any of ``statuses``, ordered by ``enqueue_seq`` then id."""
        values = list(dict.fromkeys(DocStatus(s).value for s in statuses))
        if not values:
            return []
        return await self._db.read(_select_status, values)

    async def counts(self) -> dict[str, int]:
        """Number of records per status value (every status present, 0 if none)."""
        return await self._db.read(_counts)

    async def delete(self, doc_ids: Iterable[str]) -> None:
        ids = sorted(set(doc_ids))
        if ids:
            await self._db.write(_delete, ids)

    async def next_seq(self) -> int:
        """A number larger than every enqueue_seq stored so far, never handed out before."""
        return await self._db.write(_next_seq)


def _row(r: DocRecord) -> tuple[str, str, int, bytes]:
    return (r.id, r.status.value, int(r.enqueue_seq), codec.encode(r.to_dict()))


def _records(rows: Iterable[tuple[bytes]]) -> list[DocRecord]:
    return [DocRecord.from_dict(codec.decode_object(row[0])) for row in rows]


async def _select_ids(conn: Conn, ids: list[str]) -> dict[str, DocRecord]:
    out: dict[str, DocRecord] = {}
    for part in chunked(ids):
        cur = await conn.execute("SELECT data FROM doc_status WHERE id = ANY(%s)", (part,))
        out.update((r.id, r) for r in _records(await cur.fetchall()))
    return out


async def _select_status(conn: Conn, statuses: list[str]) -> list[DocRecord]:
    cur = await conn.execute(
        "SELECT data FROM doc_status WHERE status = ANY(%s) ORDER BY enqueue_seq, id",
        (statuses,),
    )
    return _records(await cur.fetchall())


async def _counts(conn: Conn) -> dict[str, int]:
    out = {status.value: 0 for status in DocStatus}
    cur = await conn.execute("SELECT status, COUNT(*) FROM doc_status GROUP BY status")
    for status, n in await cur.fetchall():
        out[status] = n
    return out


async def _upsert(conn: Conn, rows: list[tuple[str, str, int, bytes]]) -> None:
    async with conn.cursor() as cur:
        await cur.executemany(_UPSERT, rows)
    top = max(row[2] for row in rows)
    await conn.execute("UPDATE doc_status_top SET value = %s WHERE value < %s", (top, top))


async def _delete(conn: Conn, ids: list[str]) -> None:
    for part in chunked(ids):
        await conn.execute("DELETE FROM doc_status WHERE id = ANY(%s)", (part,))


async def _next_seq(conn: Conn) -> int:
    return await scalar(await conn.execute(_NEXT))
