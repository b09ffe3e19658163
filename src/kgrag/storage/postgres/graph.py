"""The knowledge graph as three tables: ``nodes``, ``edges`` and ``node_degree``.

Edges are undirected and stored once under their canonical key
(:func:`~kgrag.storage.base.edge_key`, ``a <= b``); the primary key serves
lookups by ``a`` and ``edges_b`` (``b, a``) lookups by ``b``, both as
index-only scans.

A node's degree is the number of distinct edges touching it; a self-loop
counts once. ``node_degree`` keeps it, changed by the same statement that
writes or deletes the edges: the edge upsert reports which rows it
inserted (``xmax = 0`` of the returned row: an update leaves the locking
transaction there), the delete which rows it removed, so a concurrent
writer adding or removing the same edge is never counted twice. Rows that
reach zero are deleted right after. As in the embedded store, edges may
name endpoints without a node row, and ``delete_nodes`` removes every
incident edge.

Every write is one statement per slice of rows (``unnest`` of array
parameters) in sorted key order, so concurrent transactions writing the
same rows queue instead of deadlocking. Text keys are ``COLLATE "C"``:
``ORDER BY`` matches Python's ``sorted()``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kgrag.storage.base import JSONObject, edge_key, edge_weight
from kgrag.storage.postgres import codec
from kgrag.storage.postgres.db import Conn, Database, chunked, scalar

Pair = tuple[str, str]
_BATCH = 5000  # rows per write statement (array parameters)

DDL = """
CREATE TABLE IF NOT EXISTS nodes (
    name TEXT COLLATE "C" PRIMARY KEY,
    data BYTEA NOT NULL
);
CREATE TABLE IF NOT EXISTS edges (
    a      TEXT COLLATE "C" NOT NULL,
    b      TEXT COLLATE "C" NOT NULL,
    weight DOUBLE PRECISION NOT NULL,
    data   BYTEA NOT NULL,
    PRIMARY KEY (a, b)
);
CREATE INDEX IF NOT EXISTS edges_b ON edges (b, a);
CREATE TABLE IF NOT EXISTS node_degree (
    name   TEXT COLLATE "C" PRIMARY KEY,
    degree INTEGER NOT NULL
);
"""

# The tail of every edge write: add ``{sign}1`` per end of each edge in
# ``changed(a, b)`` (a self-loop once), in name order.
_DEGREES = """
, ends AS (
    SELECT a AS name FROM changed UNION ALL SELECT b FROM changed WHERE b <> a
)
INSERT INTO node_degree AS d (name, degree)
SELECT name, {sign}count(*) FROM ends GROUP BY name ORDER BY name
ON CONFLICT (name) DO UPDATE SET degree = d.degree + EXCLUDED.degree
RETURNING d.name, d.degree
"""

_UPSERT_EDGES = """
WITH written AS (
    INSERT INTO edges AS e (a, b, weight, data)
    SELECT * FROM unnest(%s::text[], %s::text[], %s::float8[], %s::bytea[])
    ON CONFLICT (a, b) DO UPDATE SET weight = EXCLUDED.weight, data = EXCLUDED.data
    RETURNING e.a, e.b, e.xmax = 0 AS added
), changed AS (SELECT a, b FROM written WHERE added)
""" + _DEGREES.format(sign="")

_DELETE_EDGES = """
WITH changed AS (
    DELETE FROM edges e USING unnest(%s::text[], %s::text[]) AS k(a, b)
    WHERE e.a = k.a AND e.b = k.b
    RETURNING e.a, e.b
)
""" + _DEGREES.format(sign="-")

_DELETE_NODES = """
WITH changed AS (
    DELETE FROM edges WHERE a = ANY(%(names)s) OR b = ANY(%(names)s) RETURNING a, b
), dropped AS (
    DELETE FROM nodes WHERE name = ANY(%(names)s)
)
""" + _DEGREES.format(sign="-")

_HOP = """
SELECT n FROM (
    SELECT b AS n FROM edges WHERE a = ANY(%(frontier)s)
    UNION SELECT a FROM edges WHERE b = ANY(%(frontier)s)
    EXCEPT SELECT unnest(%(seen)s::text[]) COLLATE "C"
) AS hop ORDER BY n LIMIT %(room)s
"""


class PgGraphStore:
    """Nodes keyed by name, undirected edges keyed by canonical pair."""

    def __init__(self, db: Database):
        self._db = db

    # -- nodes -----------------------------------------------------------------

    async def get_node(self, name: str) -> JSONObject | None:
        return (await self.get_nodes([name])).get(name)

    async def get_nodes(self, names: list[str]) -> dict[str, JSONObject]:
        return await self._db.read(_select_nodes, list(dict.fromkeys(names)))

    async def upsert_nodes(self, nodes: Mapping[str, Mapping[str, object]]) -> None:
        names = sorted(nodes)
        if names:
            await self._db.write(_upsert_nodes, names, [codec.encode(nodes[n]) for n in names])

    async def delete_nodes(self, names: Iterable[str]) -> None:
        """Delete nodes and every edge touching them."""
        wanted = sorted(set(names))
        if wanted:
            await self._db.write(_delete_nodes, wanted)

    async def node_count(self) -> int:
        return await self._db.read(_scalar, "SELECT count(*) FROM nodes")

    async def all_node_names(self) -> list[str]:
        """Every node name, sorted."""
        return await self._db.read(_column, "SELECT name FROM nodes ORDER BY name")

    # -- edges -----------------------------------------------------------------

    async def get_edge(self, a: str, b: str) -> JSONObject | None:
        return (await self.get_edges([(a, b)])).get(edge_key(a, b))

    async def get_edges(self, pairs: list[Pair]) -> dict[Pair, JSONObject]:
        """Keys of the result are canonical :func:`edge_key` pairs, in the order asked."""
        keys = list(dict.fromkeys(edge_key(a, b) for a, b in pairs))
        return await self._db.read(_select_edges, keys)

    async def upsert_edges(self, edges: Mapping[Pair, Mapping[str, object]]) -> None:
        rows: dict[Pair, tuple[float, bytes]] = {}
        for (a, b), data in edges.items():
            rows[edge_key(a, b)] = (edge_weight(data), codec.encode(data))
        if rows:
            await self._db.write(_upsert_edges, sorted(rows.items()))

    async def delete_edges(self, pairs: Iterable[Pair]) -> None:
        keys = sorted({edge_key(a, b) for a, b in pairs})
        if keys:
            await self._db.write(_delete_edges, keys)

    async def node_edges(self, names: list[str]) -> dict[str, list[Pair]]:
        """For each name, the canonical keys of its edges (sorted)."""
        return await self._db.read(_node_edges, list(dict.fromkeys(names)))

    async def node_degrees(self, names: list[str]) -> dict[str, int]:
        return await self._db.read(_node_degrees, list(dict.fromkeys(names)))

    async def edge_count(self) -> int:
        return await self._db.read(_scalar, "SELECT count(*) FROM edges")

    async def all_edges(self) -> list[tuple[str, str, float]]:
        """Every edge as (a, b, weight) with (a, b) canonical, sorted."""
        return await self._db.read(_rows, "SELECT a, b, weight FROM edges ORDER BY a, b")

    # -- beyond the protocol ---------------------------------------------------

    async def neighbourhood(
        self, names: list[str], hops: int, limit: int | None = None
    ) -> set[str]:
        """``names`` and every name within ``hops`` edges of them, at most ``limit`` in all.

        Breadth first on one snapshot, one statement per hop: the seeds
        come first (in the order given), then each hop's new names in name
        order until ``limit`` is reached.
        """
        seeds = list(dict.fromkeys(names))
        return await self._db.read(_neighbourhood, seeds, max(0, int(hops)), limit)


# -- SQL -------------------------------------------------------------------------


async def _select_nodes(conn: Conn, names: list[str]) -> dict[str, JSONObject]:
    out = {}
    for part in chunked(names, _BATCH):
        cur = await conn.execute(
            "SELECT name, data FROM nodes WHERE name = ANY(%s)", (part,), binary=True
        )
        for name, cell in await cur.fetchall():
            out[name] = codec.decode_object(cell)
    return out


async def _upsert_nodes(conn: Conn, names: list[str], cells: list[bytes]) -> None:
    for lo in range(0, len(names), _BATCH):
        await conn.execute(
            "INSERT INTO nodes (name, data) SELECT * FROM unnest(%s::text[], %s::bytea[]) "
            "ON CONFLICT (name) DO UPDATE SET data = EXCLUDED.data",
            (names[lo : lo + _BATCH], cells[lo : lo + _BATCH]),
        )


async def _delete_nodes(conn: Conn, names: list[str]) -> None:
    for part in chunked(names, _BATCH):
        cur = await conn.execute(_DELETE_NODES, {"names": part})
        await _drop_zero_degrees(conn, await cur.fetchall())


async def _select_edges(conn: Conn, keys: list[Pair]) -> dict[Pair, JSONObject]:
    found: dict[Pair, bytes] = {}
    for part in chunked(keys, _BATCH):
        cur = await conn.execute(
            "SELECT e.a, e.b, e.data FROM unnest(%s::text[], %s::text[]) AS k(a, b) "
            "JOIN edges e ON e.a = k.a AND e.b = k.b",
            ([a for a, _ in part], [b for _, b in part]),
            binary=True,
        )
        for a, b, cell in await cur.fetchall():
            found[(a, b)] = cell
    return {key: codec.decode_object(found[key]) for key in keys if key in found}


async def _upsert_edges(conn: Conn, rows: list[tuple[Pair, tuple[float, bytes]]]) -> None:
    for part in chunked(rows, _BATCH):
        await conn.execute(
            _UPSERT_EDGES,
            (
                [a for (a, _), _ in part],
                [b for (_, b), _ in part],
                [weight for _, (weight, _) in part],
                [cell for _, (_, cell) in part],
            ),
        )


async def _delete_edges(conn: Conn, keys: list[Pair]) -> None:
    for part in chunked(keys, _BATCH):
        cur = await conn.execute(_DELETE_EDGES, ([a for a, _ in part], [b for _, b in part]))
        await _drop_zero_degrees(conn, await cur.fetchall())


async def _drop_zero_degrees(conn: Conn, degrees: list[tuple[str, int]]) -> None:
    """Delete the ``node_degree`` rows an edge delete brought to zero."""
    gone = [name for name, degree in degrees if degree <= 0]
    if gone:
        await conn.execute("DELETE FROM node_degree WHERE name = ANY(%s) AND degree <= 0", (gone,))


async def _node_edges(conn: Conn, names: list[str]) -> dict[str, list[Pair]]:
    found: dict[str, set[Pair]] = {name: set() for name in names}
    for part in chunked(names, _BATCH):
        cur = await conn.execute(
            "SELECT a, b FROM edges WHERE a = ANY(%(n)s) UNION SELECT a, b FROM edges "
            "WHERE b = ANY(%(n)s)",
            {"n": part},
            binary=True,
        )
        for a, b in await cur.fetchall():
            for end in (a, b):
                if end in found:
                    found[end].add((a, b))
    return {name: sorted(pairs) for name, pairs in found.items()}


async def _node_degrees(conn: Conn, names: list[str]) -> dict[str, int]:
    out = dict.fromkeys(names, 0)
    for part in chunked(names, _BATCH):
        cur = await conn.execute(
            "SELECT name, degree FROM node_degree WHERE name = ANY(%s)", (part,), binary=True
        )
        out.update(await cur.fetchall())
    return out


async def _neighbourhood(conn: Conn, seeds: list[str], hops: int, limit: int | None) -> set[str]:
    found = seeds if limit is None else seeds[: max(0, limit)]
    frontier, seen = found, list(found)
    for _ in range(hops):
        room = None if limit is None else limit - len(seen)
        if not frontier or room == 0:
            break
        cur = await conn.execute(
            _HOP, {"frontier": frontier, "seen": seen, "room": room}, binary=True
        )
        frontier = [row[0] for row in await cur.fetchall()]
        seen.extend(frontier)
    return set(seen)


async def _scalar(conn: Conn, sql: str) -> int:
    return await scalar(await conn.execute(sql))


async def _column(conn: Conn, sql: str) -> list[str]:
    cur = await conn.execute(sql, binary=True)
    return [row[0] for row in await cur.fetchall()]


async def _rows(conn: Conn, sql: str) -> list[tuple[str, str, float]]:
    cur = await conn.execute(sql, binary=True)
    return [(row[0], row[1], row[2]) for row in await cur.fetchall()]
