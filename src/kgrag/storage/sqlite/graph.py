"""The knowledge graph as two tables: ``nodes`` and ``edges``.

Edges are undirected and stored once under their canonical key
(:func:`~kgrag.storage.base.edge_key`, ``a <= b``); the primary key serves
lookups by ``a`` and the ``edges_b`` index lookups by ``b``, so a node's
edges are two index range scans. The edge weight is kept in its own column
(besides the JSON data) so :meth:`all_edges` needs no JSON.

A node's degree is the number of distinct edges touching it; a self-loop
counts once. It is kept in ``node_degree`` so that a batch of degrees is
one indexed query per 500 names however large the hubs are: every edge
write looks up which of its edges exist, then adds or subtracts the
counts of its endpoints in the same write (so in the same transaction).
(Triggers did the same with 14x slower edge upserts: inside a savepoint
on a WAL database, each trigger-firing row writes a statement journal.)
Edges may name endpoints that have no node row (they have a degree all
the same); keeping the two consistent is the caller's business
(``delete_nodes`` does remove every incident edge).

Batched reads (nodes, edges, degrees) run one statement per slice of
names or pairs, never one per item.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping

from kgrag.storage.base import JSONObject, edge_key, edge_weight
from kgrag.storage.sqlite import codec
from kgrag.storage.sqlite.db import Database, chunked, marks

Pair = tuple[str, str]
EdgeCells = tuple[str, str, float, str | bytes]  # a, b, weight, data
_PAIRS_PER_QUERY = 250  # (a=? AND b=?) terms per statement: 500 parameters


class SQLiteGraphStore:
    """Nodes keyed by name, undirected edges keyed by canonical pair."""

    def __init__(self, db: Database):
        self._db = db

    # -- nodes -----------------------------------------------------------------

    async def get_node(self, name: str) -> JSONObject | None:
        return (await self.get_nodes([name])).get(name)

    async def get_nodes(self, names: list[str]) -> dict[str, JSONObject]:
        return await self._db.read(_select_nodes, list(names))

    async def upsert_nodes(self, nodes: Mapping[str, Mapping[str, object]]) -> None:
        rows = [(name, codec.encode(data)) for name, data in nodes.items()]
        if rows:
            await self._db.write(_upsert_nodes, rows)

    async def delete_nodes(self, names: Iterable[str]) -> None:
        """Delete nodes and every edge touching them."""
        names = list(dict.fromkeys(names))
        if names:
            await self._db.write(_delete_nodes, names)

    async def node_count(self) -> int:
        return await self._db.read(_scalar, "SELECT COUNT(*) FROM nodes")

    async def all_node_names(self) -> list[str]:
        return await self._db.read(_column, "SELECT name FROM nodes ORDER BY name")

    # -- edges -----------------------------------------------------------------

    async def get_edge(self, a: str, b: str) -> JSONObject | None:
        return (await self.get_edges([(a, b)])).get(edge_key(a, b))

    async def get_edges(self, pairs: list[Pair]) -> dict[Pair, JSONObject]:
        """Keys of the result are canonical :func:`edge_key` pairs."""
        keys = list(dict.fromkeys(edge_key(a, b) for a, b in pairs))
        return await self._db.read(_select_edges, keys)

    async def upsert_edges(self, edges: Mapping[Pair, Mapping[str, object]]) -> None:
        rows: dict[Pair, EdgeCells] = {}
        for (a, b), data in edges.items():
            key = edge_key(a, b)
            rows[key] = (*key, edge_weight(data), codec.encode(data))
        if rows:
            await self._db.write(_upsert_edges, list(rows.values()))

    async def delete_edges(self, pairs: Iterable[Pair]) -> None:
        keys = list(dict.fromkeys(edge_key(a, b) for a, b in pairs))
        if keys:
            await self._db.write(_delete_edges, keys)

    async def node_edges(self, names: list[str]) -> dict[str, list[Pair]]:
        """For each name, the canonical keys of its edges (sorted)."""
        return await self._db.read(_node_edges, list(dict.fromkeys(names)))

    async def node_degrees(self, names: list[str]) -> dict[str, int]:
        return await self._db.read(_node_degrees, list(dict.fromkeys(names)))

    async def edge_count(self) -> int:
        return await self._db.read(_scalar, "SELECT COUNT(*) FROM edges")

    async def all_edges(self) -> list[tuple[str, str, float]]:
        """Every edge as (a, b, weight) with (a, b) canonical."""
        return await self._db.read(_rows, "SELECT a, b, weight FROM edges ORDER BY a, b")


# -- SQL, run on the worker thread ---------------------------------------------


def _select_nodes(conn: sqlite3.Connection, names: list[str]) -> dict[str, JSONObject]:
    out = {}
    for part in chunked(names):
        sql = f"SELECT name, data FROM nodes WHERE name IN ({marks(len(part))})"
        for name, cell in conn.execute(sql, part):
            out[name] = codec.decode_object(cell)
    return out


def _upsert_nodes(conn: sqlite3.Connection, rows: list[tuple[str, str | bytes]]) -> None:
    conn.executemany(
        "INSERT INTO nodes(name, data) VALUES (?, ?) "
        "ON CONFLICT(name) DO UPDATE SET data=excluded.data",
        rows,
    )


def _delete_nodes(conn: sqlite3.Connection, names: list[str]) -> None:
    touching: set[Pair] = set()
    for part in chunked(names):
        params = marks(len(part))
        touching.update(
            conn.execute(
                f"SELECT a, b FROM edges WHERE a IN ({params}) "
                f"UNION SELECT a, b FROM edges WHERE b IN ({params})",
                part + part,
            )
        )
        conn.execute(f"DELETE FROM edges WHERE a IN ({params})", part)
        conn.execute(f"DELETE FROM edges WHERE b IN ({params})", part)
        conn.execute(f"DELETE FROM nodes WHERE name IN ({params})", part)
    _add_degrees(conn, touching, -1)


def _select_edges(conn: sqlite3.Connection, keys: list[Pair]) -> dict[Pair, JSONObject]:
    found = dict(_edge_rows(conn, "a, b, data", keys))
    # in the order asked for, like one lookup per key
    return {key: codec.decode_object(found[key]) for key in keys if key in found}


def _edge_rows(
    conn: sqlite3.Connection, columns: str, keys: list[Pair]
) -> Iterator[tuple[Pair, str | bytes | None]]:
    """``((a, b), data)`` of the stored edges among ``keys`` (``data`` if asked for): one statement per slice."""
    for part in chunked(keys, _PAIRS_PER_QUERY):
        sql = f"SELECT {columns} FROM edges WHERE " + " OR ".join(["(a=? AND b=?)"] * len(part))
        for row in conn.execute(sql, [end for key in part for end in key]):
            yield (row[0], row[1]), row[2] if len(row) > 2 else None


def _add_degrees(conn: sqlite3.Connection, keys: Iterable[Pair], sign: int) -> None:
    """Add ``sign`` to the degree of both ends of each edge key (a self-loop once)."""
    counts: Counter[str] = Counter()
    for a, b in keys:
        counts[a] += 1
        if b != a:
            counts[b] += 1
    conn.executemany(
        "INSERT INTO node_degree(name, degree) VALUES (?, ?) "
        "ON CONFLICT(name) DO UPDATE SET degree = degree + excluded.degree",
        ((name, sign * count) for name, count in counts.items()),
    )
    if sign < 0:
        conn.executemany(
            "DELETE FROM node_degree WHERE name=? AND degree <= 0", ((name,) for name in counts)
        )


def _upsert_edges(conn: sqlite3.Connection, rows: list[EdgeCells]) -> None:
    keys = [(row[0], row[1]) for row in rows]
    stored = {key for key, _ in _edge_rows(conn, "a, b", keys)}
    conn.executemany(
        "INSERT INTO edges(a, b, weight, data) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(a, b) DO UPDATE SET weight=excluded.weight, data=excluded.data",
        rows,
    )
    _add_degrees(conn, (key for key in keys if key not in stored), 1)


def _delete_edges(conn: sqlite3.Connection, keys: list[Pair]) -> None:
    stored = [key for key, _ in _edge_rows(conn, "a, b", keys)]
    conn.executemany("DELETE FROM edges WHERE a=? AND b=?", stored)
    _add_degrees(conn, stored, -1)


def _node_edges(conn: sqlite3.Connection, names: list[str]) -> dict[str, list[Pair]]:
    found: dict[str, set[Pair]] = {name: set() for name in names}
    for part in chunked(names):
        params = marks(len(part))
        sql = (
            f"SELECT a, b FROM edges WHERE a IN ({params}) "
            f"UNION SELECT a, b FROM edges WHERE b IN ({params})"
        )
        for a, b in conn.execute(sql, part + part):
            for end in (a, b):
                if end in found:
                    found[end].add((a, b))
    return {name: sorted(pairs) for name, pairs in found.items()}


def _node_degrees(conn: sqlite3.Connection, names: list[str]) -> dict[str, int]:
    out = dict.fromkeys(names, 0)
    for part in chunked(names):
        sql = f"SELECT name, degree FROM node_degree WHERE name IN ({marks(len(part))})"
        out.update(conn.execute(sql, part))
    return out


def _scalar(conn: sqlite3.Connection, sql: str) -> int:
    count: int = conn.execute(sql).fetchone()[0]
    return count


def _column(conn: sqlite3.Connection, sql: str) -> list[str]:
    return [row[0] for row in conn.execute(sql)]


def _rows(conn: sqlite3.Connection, sql: str) -> list[tuple[str, str, float]]:
    return [tuple(row) for row in conn.execute(sql)]
