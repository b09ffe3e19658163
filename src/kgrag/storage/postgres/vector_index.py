"""The approximate index of a pgvector namespace: when it is built, and of which kind.

A namespace is searched exactly (a sequential scan) until a write brings
its table to :attr:`IndexOptions.rows` rows (``postgres_index_rows``); that
write builds the HNSW index over the rows already there, in its
transaction (building over rows is several times faster than inserting
into the graph one by one), and later rows join it as they are written.

pgvector indexes ``vector`` columns of at most 2,000 dimensions and
``halfvec`` of at most 4,000 (HNSW and IVFFlat alike), so the kind follows
the dimension (:func:`index_kind`):

- up to 2,000: HNSW over the column (``vector_ip_ops``);
- up to 4,000 (``text-embedding-3-large``'s 3,072): HNSW over the column
  cast to ``halfvec`` (an expression index; the rows stay full precision).
  The search walks the half-precision index and scores the rows it returns
  at full precision (:func:`search_sql`); pgvector 0.7 or newer;
- beyond: no index; the namespace is searched exactly however large.

``m`` and ``ef_construction`` (``postgres_hnsw_*``) apply to indexes built
after they are set; ``ef_search`` to every search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kgrag.storage.postgres.db import Conn, fetch_one, scalar

EXACT_ROWS = 10_000  # namespaces smaller than this are searched exactly (the default)
VECTOR_MAX_DIM, HALFVEC_MAX_DIM = 2000, 4000  # the most dimensions pgvector indexes
INDEX_MEMORY_MAX = 1 << 30  # most maintenance_work_mem asked for an index build

Kind = Literal["vector", "halfvec", "none"]


@dataclass(frozen=True, slots=True)
class IndexOptions:
    """When a namespace gets its HNSW index, and the index's parameters."""

    rows: int = EXACT_ROWS
    m: int = 16
    ef_construction: int = 64
    ef_search: int = 100  # the least; a search asks max(this, 5 * top_k), at most 1000


@dataclass(frozen=True, slots=True)
class Space:
    table: str
    dim: int


def index_kind(dim: int) -> Kind:
    """Which index a namespace of ``dim`` dimensions gets (see the module docstring)."""
    if dim <= VECTOR_MAX_DIM:
        return "vector"
    return "halfvec" if dim <= HALFVEC_MAX_DIM else "none"


def search_sql(table: str, exact: bool, dim: int = 0) -> str:
    """The top-k statement (parameters: the query vector, k); distance ``d`` is ``-score``.

    ``dim``: the namespace's dimension, which picks the indexed expression.
    """
    if not exact and index_kind(dim) == "halfvec":  # walk the halfvec index, score exactly
        order = f"vec::halfvec({dim}) <#> %(q)s::vector::halfvec({dim})"
        return (
            f"SELECT id, vector_negative_inner_product(vec, %(q)s::vector) AS d, meta "
            f"FROM {table} ORDER BY {order} LIMIT %(k)s"
        )
    # the function form of <#> is an expression no index serves: a sequential scan
    distance = "vector_negative_inner_product(vec, %s::vector)" if exact else "vec <#> %s::vector"
    return f"SELECT id, {distance} AS d, meta FROM {table} ORDER BY d LIMIT %s"


async def index_when_large(conn: Conn, namespace: str, space: Space, options: IndexOptions) -> None:
    """Build the namespace's index once its table holds ``options.rows`` rows."""
    if index_kind(space.dim) == "none":
        return  # searched exactly however large
    cur = await conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM {space.table} LIMIT %s) t "
        "WHERE NOT (SELECT indexed FROM vector_spaces WHERE ns = %s)",
        (options.rows, namespace),
    )
    rows = await scalar(cur)
    if rows < options.rows or not await _can_index(conn, space.dim):
        return
    cur = await conn.execute(  # of two writers crossing the line at once, one builds
        "UPDATE vector_spaces SET indexed = true WHERE ns = %s AND NOT indexed RETURNING id",
        (namespace,),
    )
    if await cur.fetchone() is not None:
        cur = await conn.execute(f"SELECT count(*) FROM {space.table}")
        await _build_index(conn, space, await scalar(cur), options)


async def build_indexes(conn: Conn, options: IndexOptions | None = None) -> list[str]:
    """The index of every namespace large enough and without one (after a bulk load)."""
    options = options or IndexOptions()
    cur = await conn.execute("SELECT ns, id, dim FROM vector_spaces WHERE NOT indexed ORDER BY ns")
    built = []
    for ns, space_id, dim in await cur.fetchall():
        await index_when_large(conn, ns, Space(f"vec_{space_id}", dim), options)
        check = await conn.execute("SELECT indexed FROM vector_spaces WHERE ns = %s", (ns,))
        if (await fetch_one(check))[0]:
            built.append(ns)
    return built


async def _can_index(conn: Conn, dim: int) -> bool:
    """Whether this server's pgvector indexes ``dim`` dimensions (halfvec: 0.7 or newer)."""
    if index_kind(dim) == "vector":
        return True
    cur = await conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
    row = await cur.fetchone()
    version = tuple(int(p) for p in str(row[0] if row else "0").split(".")[:2] if p.isdigit())
    return version >= (0, 7)


async def _build_index(conn: Conn, space: Space, rows: int, options: IndexOptions) -> None:
    """The HNSW index of a table, over the rows just written."""
    memory = min(INDEX_MEMORY_MAX, rows * (4 * space.dim + 1024))
    await conn.execute(  # raise maintenance_work_mem for this build only, never lower it
        "SELECT set_config('maintenance_work_mem', GREATEST(setting::bigint, %s) || 'kB', true) "
        "FROM pg_settings WHERE name = 'maintenance_work_mem'",
        (memory // 1024,),
    )
    column = "vec vector_ip_ops"
    if index_kind(space.dim) == "halfvec":
        column = f"(vec::halfvec({space.dim})) halfvec_ip_ops"
    params = f"m = {int(options.m)}, ef_construction = {int(options.ef_construction)}"
    await conn.execute(
        f"CREATE INDEX {space.table}_hnsw ON {space.table} USING hnsw ({column}) WITH ({params})"
    )
