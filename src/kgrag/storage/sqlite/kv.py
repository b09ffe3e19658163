"""Key-value namespaces: one ``kv`` table keyed by (namespace, key).

Values are JSON, compressed transparently when large (see
:mod:`~kgrag.storage.sqlite.codec`). An upsert replaces whole values and
touches only the rows it names.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping

from kgrag.storage.base import JSONObject
from kgrag.storage.sqlite import codec
from kgrag.storage.sqlite.db import Database, chunked, marks


class SQLiteKVStore:
    """One key-value namespace."""

    def __init__(self, db: Database, namespace: str):
        self.namespace = namespace
        self._db = db

    async def get(self, key: str) -> JSONObject | None:
        return (await self.get_many([key]))[0]

    async def get_many(self, keys: list[str]) -> list[JSONObject | None]:
        """Values in the order of ``keys`` (``None`` where absent)."""
        keys = list(keys)
        found = await self._db.read(self._select, list(dict.fromkeys(keys)))
        return [found.get(key) for key in keys]

    async def upsert(self, items: Mapping[str, Mapping[str, object]]) -> None:
        rows = [(self.namespace, key, codec.encode(value)) for key, value in items.items()]
        if rows:
            await self._db.write(_upsert, rows)

    async def delete(self, keys: Iterable[str]) -> None:
        rows = [(self.namespace, key) for key in dict.fromkeys(keys)]
        if rows:
            await self._db.write(_delete, rows)

    async def missing(self, keys: Iterable[str]) -> set[str]:
        """The keys among ``keys`` that are not stored."""
        wanted = list(dict.fromkeys(keys))
        present = await self._db.read(self._present, wanted)
        return set(wanted) - present

    async def keys(self) -> list[str]:
        """Every key of the namespace, sorted."""
        return await self._db.read(self._keys)

    async def count(self) -> int:
        return await self._db.read(self._count)

    # -- SQL, run on the worker thread -------------------------------------------

    def _select(self, conn: sqlite3.Connection, keys: list[str]) -> dict[str, JSONObject]:
        out = {}
        for part in chunked(keys):
            sql = f"SELECT key, value FROM kv WHERE ns=? AND key IN ({marks(len(part))})"
            for key, cell in conn.execute(sql, [self.namespace, *part]):
                out[key] = codec.decode_object(cell)
        return out

    def _present(self, conn: sqlite3.Connection, keys: list[str]) -> set[str]:
        out: set[str] = set()
        for part in chunked(keys):
            sql = f"SELECT key FROM kv WHERE ns=? AND key IN ({marks(len(part))})"
            out.update(row[0] for row in conn.execute(sql, [self.namespace, *part]))
        return out

    def _keys(self, conn: sqlite3.Connection) -> list[str]:
        sql = "SELECT key FROM kv WHERE ns=? ORDER BY key"
        return [row[0] for row in conn.execute(sql, (self.namespace,))]

    def _count(self, conn: sqlite3.Connection) -> int:
        sql = "SELECT COUNT(*) FROM kv WHERE ns=?"
        return int(conn.execute(sql, (self.namespace,)).fetchone()[0])


def _upsert(conn: sqlite3.Connection, rows: list[tuple[str, str, str | bytes]]) -> None:
    conn.executemany(
        "INSERT INTO kv(ns, key, value) VALUES (?, ?, ?) "
        "ON CONFLICT(ns, key) DO UPDATE SET value=excluded.value",
        rows,
    )


def _delete(conn: sqlite3.Connection, rows: list[tuple[str, str]]) -> None:
    conn.executemany("DELETE FROM kv WHERE ns=? AND key=?", rows)
