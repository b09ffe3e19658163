"""Vector namespaces in pgvector: one table and one HNSW index per namespace.

``vector_spaces`` lists each namespace with its id and dimension (fixed by
its first upsert); its rows live in ``vec_<id>(id, vec vector(dim), meta)``.
The first upsert creates the table in its own transaction: it claims the
name with ``INSERT ... ON CONFLICT DO NOTHING``, so of two processes
creating the same namespace at once the second waits for the first to
commit and then uses its table. The HNSW index is built by the write that
brings the table to ``postgres_index_rows`` rows (10,000), over the rows
already there; later rows join the index as they are written. Smaller
namespaces are searched exactly and need no index, so a corpus of a few
thousand entities never pays for one. Which index a dimension gets
(``vector``, ``halfvec`` above 2,000 dimensions, none above 4,000) is
:mod:`kgrag.storage.postgres.vector_index`'s.

Vectors are L2-normalised on upsert (as in the embedded store), so the
cosine similarity is the inner product: the index is ``vector_ip_ops``,
queries order by ``<#>`` (negative inner product) and a zero vector scores
0 against everything, as it does there.

Search is exact until the namespace has its index (a sequential scan) and
an HNSW scan after, with
``hnsw.ef_search = max(100, 5 * top_k)`` (200 for a top-40: recall@40 0.75
against 0.55 at 80 on a 1M-vector benchmark, 8 ms; the 100 is
``postgres_hnsw_ef_search``) and strict-order
iterative scans so
rows deleted but not yet vacuumed never cut a result short.

Vectors travel in pgvector's binary format (``int16 dim, int16 0`` and
``dim`` big-endian float32), both ways: parameters through a binary
dumper, results through ``vector_send``.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kgrag.storage.base import JSONObject, VectorHit
from kgrag.storage.postgres import codec
from kgrag.storage.postgres.db import Conn, Database, chunked, scalar
from kgrag.storage.postgres.vector_index import (
    IndexOptions,
    Space,
    index_kind,
    index_when_large,
    search_sql,
)
from kgrag.storage.sqlite.vectors import _as_matrix, _check_dim, _dedupe

EF_SEARCH_MAX = 1000  # pgvector refuses ef_search above 1000
EF_PER_HIT = 5  # ef_search per result asked for (docs/postgres.md, "At scale")
_BATCH = 2000  # rows per statement when reading by id

DDL = """
CREATE TABLE IF NOT EXISTS vector_spaces (
    id      INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ns      TEXT COLLATE "C" NOT NULL UNIQUE,
    dim     INTEGER NOT NULL,
    indexed BOOLEAN NOT NULL DEFAULT false
);
"""


@dataclass(frozen=True, slots=True)
class Packed:
    """One vector in pgvector's binary format (sent as a binary parameter)."""

    data: bytes


class PgVectorStore:
    """One vector namespace (see the module docstring)."""

    def __init__(
        self,
        db: Database,
        namespace: str,
        *,
        defer_index: bool = False,
        index: IndexOptions | None = None,
    ):
        self.namespace = namespace
        self._db = db
        self.defer_index = defer_index  # bulk loads: build_indexes() afterwards
        self.index = index or IndexOptions()

    # -- writes ----------------------------------------------------------------

    async def upsert(
        self, ids: list[str], vectors: np.ndarray, metas: Sequence[Mapping[str, object]]
    ) -> None:
        """Insert or replace vectors (normalised) with their metadata."""
        ids = list(ids)
        if not ids and not metas:
            return
        ids, rows, metas = _dedupe(ids, _as_matrix(vectors, len(ids)), metas)
        order = sorted(range(len(ids)), key=ids.__getitem__)
        packed = pack(rows)
        cells = [(ids[i], packed[i], codec.encode(dict(metas[i]))) for i in order]
        await self._db.write(self._write, rows.shape[1], cells)

    async def _write(self, conn: Conn, dim: int, cells: list[tuple[str, Packed, bytes]]) -> None:
        space, _ = await self._claim(conn, dim)
        _adapt(conn)
        async with conn.cursor() as cur:
            await cur.executemany(
                f"INSERT INTO {space.table} (id, vec, meta) VALUES (%s, %b::vector, %s) "
                "ON CONFLICT (id) DO UPDATE SET vec = EXCLUDED.vec, meta = EXCLUDED.meta",
                cells,
            )
        if not self.defer_index:
            await index_when_large(conn, self.namespace, space, self.index)

    async def delete(self, ids: Iterable[str]) -> None:
        """Remove ``ids`` (unknown ids are ignored)."""
        wanted = sorted(set(ids))
        if wanted:
            await self._db.write(self._delete, wanted)

    async def _delete(self, conn: Conn, ids: list[str]) -> None:
        space = await self._space(conn)
        if space is not None:
            for part in chunked(ids, _BATCH):
                await conn.execute(f"DELETE FROM {space.table} WHERE id = ANY(%s)", (part,))

    # -- reads -----------------------------------------------------------------

    async def query(
        self, vector: np.ndarray, top_k: int, threshold: float | None = None
    ) -> list[VectorHit]:
        """The ``top_k`` most similar vectors (cosine), best first."""
        query = _as_matrix(vector, 1)[0]
        if top_k <= 0:
            return []
        return await self._db.read(self._query, query, int(top_k), threshold)

    async def _query(
        self, conn: Conn, query: np.ndarray, top_k: int, threshold: float | None
    ) -> list[VectorHit]:
        found = await self._plan(conn, top_k)
        if found is None:
            return []
        space, exact = found
        _check_dim(self.namespace, space.dim, query.shape[0])
        _adapt(conn)
        packed = pack(query[None, :])[0]
        halfvec = not exact and index_kind(space.dim) == "halfvec"
        params = {"q": packed, "k": top_k} if halfvec else (packed, top_k)
        cur = await conn.execute(search_sql(space.table, exact, space.dim), params, binary=True)
        rows = await cur.fetchall()
        if halfvec:  # walked in half precision: best first by the exact score
            rows.sort(key=lambda row: row[1])
        hits = []
        for id_, d, cell in rows:
            score = min(1.0, max(-1.0, -d))  # rounding can overshoot 1
            if threshold is None or score >= threshold:
                hits.append(VectorHit(id_, score, codec.decode_object(cell)))
        return hits

    async def _plan(self, conn: Conn, top_k: int) -> tuple[Space, bool] | None:
        """The namespace and whether to search it exactly; sets the HNSW scan options.

        Exactly until its index exists: the write that brings the table to
        ``index.rows`` rows builds it (a planner estimate of the row count
        lags behind a bulk load, so it is not asked).
        """
        ef_search = min(EF_SEARCH_MAX, max(self.index.ef_search, EF_PER_HIT * top_k))
        cur = await conn.execute(
            "SELECT id, dim, indexed, set_config('hnsw.ef_search', %s, true), "
            "set_config('hnsw.iterative_scan', 'strict_order', true) "
            "FROM vector_spaces WHERE ns = %s",
            (str(ef_search), self.namespace),
        )
        row = await cur.fetchone()
        if row is None:
            return None
        space_id, dim, indexed = row[:3]
        return Space(f"vec_{space_id}", dim), not indexed

    async def get_vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        """Stored (normalised) vectors of the ``ids`` that exist, as float32."""
        return await self._db.read(self._get_vectors, list(dict.fromkeys(ids)))

    async def _get_vectors(self, conn: Conn, ids: list[str]) -> dict[str, np.ndarray]:
        space = await self._space(conn)
        if space is None:
            return {}
        out: dict[str, np.ndarray] = {}
        for part in chunked(ids, _BATCH):
            cur = await conn.execute(
                f"SELECT id, vector_send(vec) FROM {space.table} WHERE id = ANY(%s)",
                (part,),
                binary=True,
            )
            found = await cur.fetchall()
            if found:
                rows = unpack([row[1] for row in found], space.dim)
                out.update(zip([row[0] for row in found], rows, strict=True))
        return out

    async def get_metas(self, ids: list[str]) -> dict[str, JSONObject]:
        """Metadata of the ``ids`` that exist."""
        return await self._db.read(self._get_metas, list(dict.fromkeys(ids)))

    async def _get_metas(self, conn: Conn, ids: list[str]) -> dict[str, JSONObject]:
        space = await self._space(conn)
        if space is None:
            return {}
        out = {}
        for part in chunked(ids, _BATCH):
            cur = await conn.execute(
                f"SELECT id, meta FROM {space.table} WHERE id = ANY(%s)", (part,), binary=True
            )
            for id_, cell in await cur.fetchall():
                out[id_] = codec.decode_object(cell)
        return out

    async def count(self) -> int:
        """Number of stored vectors."""
        return await self._db.read(self._count)

    async def _count(self, conn: Conn) -> int:
        space = await self._space(conn)
        if space is None:
            return 0
        return await scalar(await conn.execute(f"SELECT count(*) FROM {space.table}"))

    async def ids(self) -> list[str]:
        """Every stored id, sorted."""
        return await self._db.read(self._ids)

    async def _ids(self, conn: Conn) -> list[str]:
        space = await self._space(conn)
        if space is None:
            return []
        cur = await conn.execute(f"SELECT id FROM {space.table} ORDER BY id", binary=True)
        return [row[0] for row in await cur.fetchall()]

    # -- the namespace's table -------------------------------------------------

    async def _space(self, conn: Conn) -> Space | None:
        cur = await conn.execute(
            "SELECT id, dim FROM vector_spaces WHERE ns = %s", (self.namespace,)
        )
        row = await cur.fetchone()
        return None if row is None else Space(f"vec_{row[0]}", row[1])

    async def _claim(self, conn: Conn, dim: int) -> tuple[Space, bool]:
        """The namespace's table (created, without its index, if new) and whether it is new."""
        space = await self._space(conn)
        created = False
        if space is None:
            cur = await conn.execute(
                "INSERT INTO vector_spaces (ns, dim) VALUES (%s, %s) "
                "ON CONFLICT (ns) DO NOTHING RETURNING id",
                (self.namespace, dim),
            )
            row = await cur.fetchone()
            if row is not None:
                space, created = Space(f"vec_{row[0]}", dim), True
                await conn.execute(
                    f'CREATE TABLE {space.table} (id TEXT COLLATE "C" PRIMARY KEY, '
                    f"vec vector({dim}) NOT NULL, meta BYTEA NOT NULL)"
                )
            else:  # another transaction created it meanwhile (and has committed)
                space = await self._space(conn)
                assert space is not None
        _check_dim(self.namespace, space.dim, dim)
        return space, created


def pack(rows: np.ndarray) -> list[Packed]:
    """Each row of ``rows`` (float32) in pgvector's binary format."""
    header = struct.pack(">HH", rows.shape[1], 0)
    body = np.ascontiguousarray(rows, dtype=">f4")
    return [Packed(header + body[i].tobytes()) for i in range(rows.shape[0])]


def unpack(cells: list[bytes], dim: int) -> np.ndarray:
    """Rows of float32 from ``vector_send`` cells of dimension ``dim``."""
    raw = np.frombuffer(b"".join(cells), np.uint8).reshape(len(cells), 4 + 4 * dim)
    return np.ascontiguousarray(raw[:, 4:]).view(">f4").astype(np.float32)


def _adapt(conn: Conn) -> None:
    """Let ``conn`` send :class:`Packed` values as binary parameters."""
    conn.adapters.register_dumper(Packed, _dumper())


@functools.cache
def _dumper() -> type:
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    class PackedDumper(Dumper):
        format = Format.BINARY  # oid 0: the server takes the type from the ::vector cast

        def dump(self, obj: object) -> bytes:
            assert isinstance(obj, Packed)  # registered for Packed only
            return obj.data

    return PackedDumper


async def namespaces(conn: Conn) -> list[str]:
    """Every vector namespace ever created, sorted."""
    cur = await conn.execute("SELECT ns FROM vector_spaces ORDER BY ns")
    return [row[0] for row in await cur.fetchall()]
