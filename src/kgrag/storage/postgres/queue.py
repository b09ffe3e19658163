"""The work queue of a PostgreSQL workspace: leases on rows of ``doc_status``.

``kgrag enqueue`` leaves documents ``pending``; each ``kgrag worker``
claims some with ``SELECT ... FOR UPDATE SKIP LOCKED`` (two workers never
claim one document, and neither waits for the other) and holds a lease:

- ``claim`` sets ``status = processing``, ``lease_owner``, ``lease_until``
  and counts the attempt. A document whose lease has expired (its worker
  died or stalled) is claimable again; so is a ``pending`` one whose
  ``lease_until`` (a retry's not-before time) has passed;
- ``renew`` pushes ``lease_until`` forward while the worker works;
- ``guard`` runs inside the commit's transaction: it locks the row, checks
  the lease is still this worker's and counts the commit; otherwise it
  raises :class:`~kgrag.errors.LeaseLostError` and the transaction rolls
  back, so a document is committed by one worker only;
- ``settle`` writes a record (failed, or pending again for a retry) only
  while the lease is still held, and ends it.

An upsert of a record by anyone else (a re-enqueued update) ends the lease
too (see :mod:`~kgrag.storage.postgres.doc_status`), so a worker never
commits a version that was replaced while it worked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgrag.errors import LeaseLostError
from kgrag.storage.base import QueueCounts
from kgrag.storage.postgres import codec
from kgrag.storage.postgres.db import Conn, Database
from kgrag.types import DocRecord

if TYPE_CHECKING:
    from psycopg.rows import TupleRow

_CLAIM = """
WITH picked AS (
    SELECT id FROM doc_status
    WHERE (status = 'pending' AND (lease_until IS NULL OR lease_until < now()))
       OR (status = 'processing' AND (lease_until IS NULL OR lease_until < now()))
    ORDER BY enqueue_seq, id
    LIMIT %s
    FOR UPDATE SKIP LOCKED
)
UPDATE doc_status AS d
SET status = 'processing', lease_owner = %s,
    lease_until = now() + make_interval(secs => %s), attempts = d.attempts + 1
FROM picked WHERE d.id = picked.id
RETURNING d.data, d.attempts
"""


class PgWorkQueue:
    """Leases on the documents of one workspace (see the module docstring)."""

    def __init__(self, db: Database):
        self._db = db

    async def claim(self, owner: str, limit: int, lease_s: float) -> list[tuple[DocRecord, int]]:
        """Up to ``limit`` documents, oldest first, each with its attempt number."""
        rows = await self._db.write(_fetch, _CLAIM, (limit, owner, lease_s))
        out = [(DocRecord.from_dict(codec.decode_object(data)), int(n)) for data, n in rows]
        return sorted(out, key=lambda item: (item[0].enqueue_seq, item[0].id))

    async def renew(self, owner: str, ids: list[str], lease_s: float) -> set[str]:
        """Extend this worker's leases on ``ids``; the ids still held."""
        if not ids:
            return set()
        rows = await self._db.write(
            _fetch,
            "UPDATE doc_status SET lease_until = now() + make_interval(secs => %s) "
            "WHERE id = ANY(%s) AND lease_owner = %s AND status = 'processing' RETURNING id",
            (lease_s, sorted(ids), owner),
        )
        return {row[0] for row in rows}

    async def started(self, owner: str, record: DocRecord) -> None:
        """Store the record as the worker fills it in (still ``processing``), if still held."""
        await self._db.write(
            _fetch,
            "UPDATE doc_status SET data = %s WHERE id = %s AND lease_owner = %s RETURNING id",
            (codec.encode(record.to_dict()), record.id, owner),
        )

    async def guard(self, owner: str, doc_id: str) -> None:
        """In the commit's transaction: the lease is still ours (counts the commit)."""
        rows = await self._db.write(
            _fetch,
            "UPDATE doc_status SET commits = commits + 1 "
            "WHERE id = %s AND lease_owner = %s AND status = 'processing' "
            "AND lease_until > now() RETURNING id",
            (doc_id, owner),
        )
        if not rows:
            raise LeaseLostError(f"the lease on {doc_id} has expired; another worker has it")

    async def settle(self, owner: str, record: DocRecord, retry_after_s: float | None) -> bool:
        """Write ``record`` and end the lease (``retry_after_s``: pending again, not before)."""
        rows = await self._db.write(
            _fetch,
            "UPDATE doc_status SET status = %s, data = %s, lease_owner = NULL, "
            "lease_until = CASE WHEN %s::float8 IS NULL THEN NULL "
            "ELSE now() + make_interval(secs => %s::float8) END "
            "WHERE id = %s AND lease_owner = %s RETURNING id",
            (
                record.status.value,
                codec.encode(record.to_dict()),
                retry_after_s,
                retry_after_s,
                record.id,
                owner,
            ),
        )
        return bool(rows)

    async def release_all(self, owner: str) -> int:
        """Give back every lease of ``owner`` still open (a worker stopping early)."""
        rows = await self._db.write(
            _fetch,
            "UPDATE doc_status SET status = 'pending', lease_owner = NULL, lease_until = NULL "
            "WHERE lease_owner = %s AND status = 'processing' RETURNING id",
            (owner,),
        )
        return len(rows)

    async def counts(self) -> QueueCounts:
        row = await self._db.read(
            _fetch,
            "SELECT count(*) FILTER (WHERE status = 'pending'), "
            "count(*) FILTER (WHERE status = 'processing' AND lease_until >= now()), "
            "count(*) FILTER (WHERE status = 'processing' AND "
            "(lease_until IS NULL OR lease_until < now())) "
            "FROM doc_status",
            (),
        )
        pending, leased, expired = row[0]
        return QueueCounts(int(pending), int(leased), int(expired))

    async def commits(self) -> dict[str, int]:
        """How many times each document was committed by a worker (every document)."""
        rows = await self._db.read(_fetch, "SELECT id, commits FROM doc_status", ())
        return {doc_id: int(n) for doc_id, n in rows}

    async def leases_held(self) -> int:
        """Documents with a lease owner (live or expired)."""
        rows = await self._db.read(
            _fetch, "SELECT count(*) FROM doc_status WHERE lease_owner IS NOT NULL", ()
        )
        return int(rows[0][0])


async def _fetch(conn: Conn, sql: str, params: tuple[object, ...]) -> list[TupleRow]:
    cur = await conn.execute(sql, params)
    return list(await cur.fetchall())
