"""The document status table.

Columns for what is searched or sorted (``status``, ``enqueue_seq``, both
indexed) plus the whole :class:`~kgrag.types.DocRecord` as JSON. The
largest ``enqueue_seq`` ever stored is also kept in ``meta`` so that
:meth:`next_seq` never hands out a number again after a delete.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from kgrag.storage.layout import MAX_SEQ_META
from kgrag.storage.sqlite import codec
from kgrag.storage.sqlite.db import Database, chunked, marks
from kgrag.types import DocRecord, DocStatus

_MAX_SEQ_KEY = MAX_SEQ_META
StatusCells = tuple[str, str, int, str | bytes]  # id, status, enqueue_seq, data


class SQLiteDocStatusStore:
    """Per-document processing state."""

    def __init__(self, db: Database):
        self._db = db

    async def get(self, doc_id: str) -> DocRecord | None:
        return (await self.get_many([doc_id])).get(doc_id)

    async def get_many(self, doc_ids: list[str]) -> dict[str, DocRecord]:
        return await self._db.read(_select_ids, list(dict.fromkeys(doc_ids)))

    async def upsert(self, records: list[DocRecord]) -> None:
        rows = {
            r.id: (r.id, r.status.value, int(r.enqueue_seq), codec.encode(r.to_dict()))
            for r in records
        }
        if rows:
            await self._db.write(_upsert, list(rows.values()))

    async def by_status(self, *statuses: DocStatus) -> list[DocRecord]:
        """Records with any of ``statuses``, ordered by ``enqueue_seq``."""
        values = list(dict.fromkeys(DocStatus(s).value for s in statuses))
        if not values:
            return []
        return await self._db.read(_select_status, values)

    async def counts(self) -> dict[str, int]:
        """Number of records per status value (every status present, 0 if none)."""
        return await self._db.read(_counts)

    async def delete(self, doc_ids: Iterable[str]) -> None:
        ids = [(i,) for i in dict.fromkeys(doc_ids)]
        if ids:
            await self._db.write(_delete, ids)

    async def next_seq(self) -> int:
        """A number larger than every enqueue_seq stored so far."""
        return await self._db.read(_next_seq)


def _records(cursor: Iterable[tuple[str | bytes]]) -> list[DocRecord]:
    return [DocRecord.from_dict(codec.decode_object(row[0])) for row in cursor]


def _select_ids(conn: sqlite3.Connection, ids: list[str]) -> dict[str, DocRecord]:
    out: dict[str, DocRecord] = {}
    for part in chunked(ids):
        sql = f"SELECT data FROM doc_status WHERE id IN ({marks(len(part))})"
        out.update((r.id, r) for r in _records(conn.execute(sql, part)))
    return out


def _select_status(conn: sqlite3.Connection, statuses: list[str]) -> list[DocRecord]:
    sql = (
        f"SELECT data FROM doc_status WHERE status IN ({marks(len(statuses))}) "
        "ORDER BY enqueue_seq, id"
    )
    return _records(conn.execute(sql, statuses))


def _counts(conn: sqlite3.Connection) -> dict[str, int]:
    out = {status.value: 0 for status in DocStatus}
    for status, n in conn.execute("SELECT status, COUNT(*) FROM doc_status GROUP BY status"):
        out[status] = n
    return out


def _upsert(conn: sqlite3.Connection, rows: list[StatusCells]) -> None:
    conn.executemany(
        "INSERT INTO doc_status(id, status, enqueue_seq, data) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(id) DO UPDATE SET status=excluded.status, "
        "enqueue_seq=excluded.enqueue_seq, data=excluded.data",
        rows,
    )
    top = max(row[2] for row in rows)
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
        "value=CAST(MAX(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER)) AS TEXT)",
        (_MAX_SEQ_KEY, str(top)),
    )


def _delete(conn: sqlite3.Connection, ids: list[tuple[str]]) -> None:
    conn.executemany("DELETE FROM doc_status WHERE id=?", ids)


def _next_seq(conn: sqlite3.Connection) -> int:
    (current,) = conn.execute("SELECT COALESCE(MAX(enqueue_seq), 0) FROM doc_status").fetchone()
    row = conn.execute("SELECT value FROM meta WHERE key=?", (_MAX_SEQ_KEY,)).fetchone()
    return max(int(current), int(row[0]) if row else 0) + 1
