"""Key-value namespaces: one ``kv`` table keyed by (namespace, key).

Values are JSON in ``bytea`` cells (:mod:`~kgrag.storage.postgres.codec`).
Keys are their UTF-8 bytes (``bytea``): PostgreSQL text cannot hold NUL,
which a key may, and bytes sort as Python sorts strings.
Lists of keys travel as one array parameter (``= ANY(%s)``); upserts go in
key order, so concurrent transactions writing the same keys queue instead
of deadlocking.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kgrag.storage.base import JSONObject
from kgrag.storage.postgres import codec
from kgrag.storage.postgres.db import Conn, Database, chunked, scalar

DDL = """
CREATE TABLE IF NOT EXISTS kv (
    ns    TEXT COLLATE "C" NOT NULL,
    key   BYTEA NOT NULL,
    value BYTEA NOT NULL,
    PRIMARY KEY (ns, key)
);
"""


class PgKVStore:
    """One key-value namespace."""

    def __init__(self, db: Database, namespace: str):
        self.namespace = namespace
        self._db = db

    async def get(self, key: str) -> JSONObject | None:
        return (await self.get_many([key]))[0]

    async def get_many(self, keys: list[str]) -> list[JSONObject | None]:
        """Values in the order of ``keys`` (``None`` where absent)."""
        keys = list(keys)
        found = await self._db.read(self._select, [_b(k) for k in dict.fromkeys(keys)])
        return [found.get(key) for key in keys]

    async def upsert(self, items: Mapping[str, Mapping[str, object]]) -> None:
        rows = [(self.namespace, _b(key), codec.encode(items[key])) for key in sorted(items)]
        if rows:
            await self._db.write(_upsert, rows)

    async def delete(self, keys: Iterable[str]) -> None:
        wanted = [_b(k) for k in sorted(set(keys))]
        if wanted:
            await self._db.write(self._delete, wanted)

    async def missing(self, keys: Iterable[str]) -> set[str]:
        """The keys among ``keys`` that are not stored."""
        wanted = list(dict.fromkeys(keys))
        present = await self._db.read(self._present, [_b(k) for k in wanted])
        return set(wanted) - present

    async def keys(self) -> list[str]:
        """Every key of the namespace, sorted."""
        return await self._db.read(self._keys)

    async def count(self) -> int:
        return await self._db.read(self._count)

    # -- SQL ---------------------------------------------------------------------

    async def _select(self, conn: Conn, keys: list[bytes]) -> dict[str, JSONObject]:
        out = {}
        for part in chunked(keys):
            cur = await conn.execute(
                "SELECT key, value FROM kv WHERE ns = %s AND key = ANY(%s)",
                (self.namespace, part),
            )
            for key, cell in await cur.fetchall():
                out[_s(key)] = codec.decode_object(cell)
        return out

    async def _present(self, conn: Conn, keys: list[bytes]) -> set[str]:
        out: set[str] = set()
        for part in chunked(keys):
            cur = await conn.execute(
                "SELECT key FROM kv WHERE ns = %s AND key = ANY(%s)", (self.namespace, part)
            )
            out.update(_s(row[0]) for row in await cur.fetchall())
        return out

    async def _keys(self, conn: Conn) -> list[str]:
        cur = await conn.execute("SELECT key FROM kv WHERE ns = %s ORDER BY key", (self.namespace,))
        return [_s(row[0]) for row in await cur.fetchall()]

    async def _count(self, conn: Conn) -> int:
        cur = await conn.execute("SELECT COUNT(*) FROM kv WHERE ns = %s", (self.namespace,))
        return await scalar(cur)

    async def _delete(self, conn: Conn, keys: list[bytes]) -> None:
        for part in chunked(keys):
            await conn.execute(
                "DELETE FROM kv WHERE ns = %s AND key = ANY(%s)", (self.namespace, part)
            )


def _b(key: str) -> bytes:
    return key.encode("utf-8", "surrogatepass")


def _s(cell: bytes | memoryview) -> str:
    return bytes(cell).decode("utf-8", "surrogatepass")


async def _upsert(conn: Conn, rows: list[tuple[str, bytes, bytes]]) -> None:
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO kv (ns, key, value) VALUES (%s, %s, %s) "
            "ON CONFLICT (ns, key) DO UPDATE SET value = EXCLUDED.value",
            rows,
        )


async def namespaces(conn: Conn) -> list[str]:
    """Every key-value namespace holding a key, sorted."""
    cur = await conn.execute("SELECT DISTINCT ns FROM kv ORDER BY ns")  # ns is COLLATE "C"
    return [row[0] for row in await cur.fetchall()]
