"""Vector namespaces: rows in SQLite, search in an in-memory matrix.

Each namespace has a row in ``vector_spaces`` (its dimension and on-disk
dtype) and its own table ``vec_<id>(id, vec BLOB, meta)``. Vectors are
L2-normalised on upsert, so a query is one matrix-vector product.

The :class:`~kgrag.storage.sqlite.matrix.MatrixIndex` is loaded lazily on
the first query and then follows committed writes only: a write inside a
transaction changes it when the transaction commits, and a rollback
leaves it as it was. (If the matrix is first loaded inside a transaction
that already wrote to the namespace, it sees those rows; should that
transaction roll back, the matrix is dropped and reloaded on next use.)
Rows other connections (processes) commit reach it through the database's
refresh hook (:meth:`~kgrag.storage.sqlite.db.Database.on_refresh`): when
one of them committed, the matrix and the cached ``vector_spaces`` row are
dropped before the next read, which reloads them.

``screen_rows`` (default 0: never) makes namespaces of at least that many
rows search through a projected pre-screen first: faster, but approximate
(see :mod:`~kgrag.storage.sqlite.screen`).

On-disk dtype: ``float32`` by default (exact round trip, 4 bytes per
dimension). ``float16`` halves the file; on clustered 384-dim data it kept
99.95 % recall@10 (max score error 6e-5). Search always runs in float32:
float16 matrix products are ~10x slower in numpy.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kgrag.errors import StorageError
from kgrag.storage.base import JSONObject, VectorHit
from kgrag.storage.sqlite import codec
from kgrag.storage.sqlite.db import Database, chunked, marks
from kgrag.storage.sqlite.matrix import MatrixIndex
from kgrag.storage.sqlite.schema import vector_table_ddl

DTYPES = ("float32", "float16")
_LOAD_BATCH = 8192


@dataclass(slots=True, frozen=True)
class Space:
    table: str
    dim: int
    dtype: str


class SQLiteVectorStore:
    """One vector namespace (see the module docstring)."""

    def __init__(self, db: Database, namespace: str, dtype: str = "float32", screen_rows: int = 0):
        if dtype not in DTYPES:
            raise StorageError(f"vector dtype must be one of {DTYPES}, not {dtype!r}")
        self.namespace = namespace
        self._db = db
        self._dtype = dtype
        self._screen_rows = int(screen_rows)
        self._space: Space | None = None
        self._index: MatrixIndex | None = None
        self._loaded_in_txn = False
        db.on_refresh(self.drop_cache)

    # -- writes ----------------------------------------------------------------

    async def upsert(
        self, ids: list[str], vectors: np.ndarray, metas: Sequence[Mapping[str, object]]
    ) -> None:
        """Insert or replace vectors (normalised) with their metadata."""
        ids = list(ids)
        if not ids and not metas:
            return
        ids, rows, metas = _dedupe(ids, _as_matrix(vectors, len(ids)), metas)
        cells = [codec.encode(dict(m)) for m in metas]
        await self._db.write(
            self._write_rows,
            ids,
            rows,
            cells,
            on_commit=lambda: self._apply_upsert(ids, rows),
            on_rollback=self._forget_uncommitted,
        )

    def _write_rows(
        self, conn: sqlite3.Connection, ids: list[str], rows: np.ndarray, cells: list[str | bytes]
    ) -> None:
        space = self._ensure_space(conn, rows.shape[1])
        dtype = np.dtype(space.dtype)
        conn.executemany(
            f"INSERT INTO {space.table}(id, vec, meta) VALUES (?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET vec=excluded.vec, meta=excluded.meta",
            ((id_, rows[i].astype(dtype).tobytes(), cells[i]) for i, id_ in enumerate(ids)),
        )

    async def delete(self, ids: Iterable[str]) -> None:
        """Remove ``ids`` (unknown ids are ignored)."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return
        await self._db.write(
            self._delete_rows,
            ids,
            on_commit=lambda: self._apply_delete(ids),
            on_rollback=self._forget_uncommitted,
        )

    def _delete_rows(self, conn: sqlite3.Connection, ids: list[str]) -> None:
        space = self._read_space(conn)
        if space is not None:
            conn.executemany(f"DELETE FROM {space.table} WHERE id=?", ((i,) for i in ids))

    # -- reads -----------------------------------------------------------------

    async def query(
        self, vector: np.ndarray, top_k: int, threshold: float | None = None
    ) -> list[VectorHit]:
        """The ``top_k`` most similar vectors (cosine), best first."""
        query = _as_matrix(vector, 1)[0]
        return await self._db.read(self._query, query, int(top_k), threshold)

    def _query(
        self, conn: sqlite3.Connection, query: np.ndarray, top_k: int, threshold: float | None
    ) -> list[VectorHit]:
        space = self._read_space(conn)
        if space is None or top_k <= 0:
            return []
        _check_dim(self.namespace, space.dim, query.shape[0])
        pairs = self._load(conn, space).search(query, top_k, threshold)
        metas = self._metas(conn, space, [id_ for id_, _ in pairs])
        # rows deleted by an open transaction are still in the matrix: skip them
        return [VectorHit(id_, score, metas[id_]) for id_, score in pairs if id_ in metas]

    async def get_vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        """Stored (normalised) vectors of the ``ids`` that exist."""
        return await self._db.read(self._get_vectors, list(ids))

    def _get_vectors(self, conn: sqlite3.Connection, ids: list[str]) -> dict[str, np.ndarray]:
        space = self._read_space(conn)
        if space is None:
            return {}
        out = {}
        for part in chunked(ids):
            for id_, blob in conn.execute(
                f"SELECT id, vec FROM {space.table} WHERE id IN ({marks(len(part))})", part
            ):
                out[id_] = np.frombuffer(blob, space.dtype).astype(np.float32)
        return out

    async def get_metas(self, ids: list[str]) -> dict[str, JSONObject]:
        """Metadata of the ``ids`` that exist."""
        return await self._db.read(self._get_metas, list(ids))

    def _get_metas(self, conn: sqlite3.Connection, ids: list[str]) -> dict[str, JSONObject]:
        space = self._read_space(conn)
        return {} if space is None else self._metas(conn, space, ids)

    async def count(self) -> int:
        """Number of stored vectors."""
        return await self._db.read(self._count)

    async def ids(self) -> list[str]:
        """Every stored id, sorted."""
        return await self._db.read(self._ids)

    def _ids(self, conn: sqlite3.Connection) -> list[str]:
        space = self._read_space(conn)
        if space is None:
            return []
        return [row[0] for row in conn.execute(f"SELECT id FROM {space.table} ORDER BY id")]

    def _count(self, conn: sqlite3.Connection) -> int:
        space = self._read_space(conn)
        if space is None:
            return 0
        return int(conn.execute(f"SELECT COUNT(*) FROM {space.table}").fetchone()[0])

    @staticmethod
    def _metas(conn: sqlite3.Connection, space: Space, ids: list[str]) -> dict[str, JSONObject]:
        out: dict[str, JSONObject] = {}
        for part in chunked(ids):
            for id_, cell in conn.execute(
                f"SELECT id, meta FROM {space.table} WHERE id IN ({marks(len(part))})", part
            ):
                out[id_] = codec.decode_object(cell)
        return out

    # -- the namespace's table and matrix (worker thread only) ------------------

    def _read_space(self, conn: sqlite3.Connection) -> Space | None:
        if self._space is None:
            row = conn.execute(
                "SELECT id, dim, dtype FROM vector_spaces WHERE ns=?", (self.namespace,)
            ).fetchone()
            if row is not None:
                self._space = Space(f"vec_{row[0]}", row[1], row[2])
        return self._space

    def _ensure_space(self, conn: sqlite3.Connection, dim: int) -> Space:
        space = self._read_space(conn)
        if space is None:
            cur = conn.execute(
                "INSERT INTO vector_spaces(ns, dim, dtype) VALUES (?, ?, ?)",
                (self.namespace, dim, self._dtype),
            )
            conn.execute(vector_table_ddl(f"vec_{cur.lastrowid}"))
            space = self._read_space(conn)
            assert space is not None
        _check_dim(self.namespace, space.dim, dim)
        return space

    def _load(self, conn: sqlite3.Connection, space: Space) -> MatrixIndex:
        if self._index is None:
            (rows,) = conn.execute(f"SELECT COUNT(*) FROM {space.table}").fetchone()
            self._index = MatrixIndex.from_batches(
                space.dim, _scan(conn, space), rows, self._screen_rows
            )
            self._loaded_in_txn = conn.in_transaction
        return self._index

    def _apply_upsert(self, ids: list[str], rows: np.ndarray) -> None:
        if self._index is not None:
            if self._index_dtype() != "float32":  # match what a reload would see
                rows = rows.astype(self._index_dtype()).astype(np.float32)
            self._index.upsert(ids, rows)
        self._loaded_in_txn = False

    def _apply_delete(self, ids: list[str]) -> None:
        if self._index is not None:
            self._index.delete(ids)
        self._loaded_in_txn = False

    def _index_dtype(self) -> str:
        return self._space.dtype if self._space is not None else self._dtype

    def _forget_uncommitted(self) -> None:
        self._space = None  # the space row may have been rolled back
        if self._loaded_in_txn:
            self._index = None
            self._loaded_in_txn = False

    def drop_cache(self) -> None:
        """Forget the matrix and the space row (both reload on next use)."""
        self._index = None
        self._space = None
        self._loaded_in_txn = False


def _scan(conn: sqlite3.Connection, space: Space) -> Iterator[tuple[list[str], np.ndarray]]:
    """Every row of ``space`` in batches of (ids, float32 rows)."""
    cur = conn.execute(f"SELECT id, vec FROM {space.table}")
    while batch := cur.fetchmany(_LOAD_BATCH):
        ids = [row[0] for row in batch]
        flat = np.frombuffer(b"".join(row[1] for row in batch), space.dtype)
        yield ids, flat.reshape(len(ids), space.dim).astype(np.float32, copy=False)


def _as_matrix(vectors: npt.ArrayLike, rows: int) -> np.ndarray:
    """``vectors`` as ``rows`` unit-norm float32 rows (zero rows stay zero)."""
    mat = np.asarray(vectors, dtype=np.float32)
    if mat.ndim == 1:
        mat = mat.reshape(1, -1)
    if mat.ndim != 2 or mat.shape[0] != rows:
        raise StorageError(f"expected {rows} vectors, got an array of shape {mat.shape}")
    if not np.isfinite(mat).all():
        raise StorageError("vectors contain NaN or infinite values")
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    return mat / np.where(norms > 0, norms, 1.0)


def _dedupe(
    ids: list[str], rows: np.ndarray, metas: Sequence[Mapping[str, object]]
) -> tuple[list[str], np.ndarray, Sequence[Mapping[str, object]]]:
    """Keep the last occurrence of each id."""
    if len(metas) != len(ids):
        raise StorageError(f"{len(ids)} ids but {len(metas)} metadata dicts")
    last = {id_: i for i, id_ in enumerate(ids)}
    if len(last) == len(ids):
        return ids, rows, metas
    keep = sorted(last.values())
    return [ids[i] for i in keep], rows[keep], [metas[i] for i in keep]


def _check_dim(namespace: str, stored: int, given: int) -> None:
    if stored != given:
        raise StorageError(
            f"vector namespace {namespace!r} holds {stored}-dimensional vectors but "
            f"got {given}-dimensional ones; the embedding model probably changed. "
            "Re-embed everything (rebuild the index) or use a new working directory."
        )
