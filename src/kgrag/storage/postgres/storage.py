"""The PostgreSQL backend: every role of one workspace in one schema.

Selected with ``storage = "postgres"`` (``KGRAG_STORAGE=postgres``) and a
DSN (``KGRAG_POSTGRES_DSN``, any libpq connection string or URI). The
workspace (``KGRAG_POSTGRES_WORKSPACE``, by default the working
directory's folder name) is the schema ``kgrag_<workspace>``; any number of
processes on any number of machines may open it at once:

- every read runs on one snapshot; commits of other processes are seen at
  once (nothing is cached between calls, so there is nothing to refresh);
- a change's read-plan-write section holds :meth:`PostgresStorage.serial`
  (an advisory lock), so concurrent writers never merge from stale rows;
- the writer lease (:meth:`PostgresStorage.writer`) is an advisory lock too,
  freed by the server when its holder's connection ends.

Connections survive a server restart (:mod:`~kgrag.storage.postgres.db`).
Vectors use pgvector (HNSW, cosine; ``halfvec`` above 2,000 dimensions); the graph is plain tables; lexical
search is BM25 over a term table. See docs/postgres.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TypedDict, Unpack

from kgrag.errors import ConfigError
from kgrag.storage.base import Capability
from kgrag.storage.postgres import codec
from kgrag.storage.postgres.db import Conn, Database, PoolOptions
from kgrag.storage.postgres.doc_status import PgDocStatusStore
from kgrag.storage.postgres.graph import PgGraphStore
from kgrag.storage.postgres.kv import PgKVStore
from kgrag.storage.postgres.kv import namespaces as kv_namespaces
from kgrag.storage.postgres.lexical import PgLexicalIndex
from kgrag.storage.postgres.locks import SERIAL, WRITER, AdvisoryLock, KeyClaims
from kgrag.storage.postgres.queue import PgWorkQueue
from kgrag.storage.postgres.schema import drop_schema, ensure_schema, schema_exists
from kgrag.storage.postgres.vector_index import IndexOptions, build_indexes
from kgrag.storage.postgres.vectors import PgVectorStore
from kgrag.storage.postgres.vectors import namespaces as vector_namespaces


class PostgresOptions(TypedDict, total=False):
    """The options of :class:`PostgresStorage` (docs/postgres.md; ``dsn`` is required)."""

    dsn: str | None  # required: None (unset) is refused with a ConfigError
    workspace: str | None
    pool_min: int
    pool_max: int
    reconnect_s: float
    conninfo: dict[str, str]  # libpq parameters added to the DSN (sslmode, ...)
    lexical: bool
    defer_vector_index: bool
    index_rows: int
    hnsw_m: int
    hnsw_ef_construction: int
    hnsw_ef_search: int


_OPTIONS = set(PostgresOptions.__annotations__)
_NAME = re.compile(r"^[a-z0-9_]{1,48}$")
SCHEMA_PREFIX = "kgrag_"


def workspace_name(raw: str) -> str:
    """A folder or workspace name as a schema-safe name (lowercase, ``_`` for the rest)."""
    name = re.sub(r"[^a-z0-9_]+", "_", raw.lower()).strip("_")[:48]
    return name or "default"


class PostgresStorage:
    """Every storage role for one workspace, in PostgreSQL."""

    name = "postgres"
    capabilities = frozenset(Capability)  # every optional feature (docs/postgres.md)

    def __init__(self, workdir: Path, **options: Unpack[PostgresOptions]):
        unknown = set(options) - _OPTIONS
        if unknown:
            raise ConfigError(
                f"unknown postgres storage option(s): {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(_OPTIONS))}"
            )
        dsn = options.get("dsn")
        if not dsn:
            raise ConfigError(
                "the postgres storage needs a DSN: set KGRAG_POSTGRES_DSN "
                "(e.g. postgresql://user:password@host:5432/dbname)"
            )
        self.workdir = Path(workdir)
        workspace = options.get("workspace") or workspace_name(self.workdir.resolve().name)
        if not _NAME.match(workspace):
            raise ConfigError(
                f"postgres workspace {workspace!r} must be 1-48 characters of a-z, 0-9 and _"
            )
        self.workspace = workspace
        self.schema = SCHEMA_PREFIX + workspace
        pool = PoolOptions(
            min_size=int(options.get("pool_min", 1)),
            max_size=int(options.get("pool_max", 12)),
            reconnect_s=float(options.get("reconnect_s", 60.0)),
            conninfo={str(k): str(v) for k, v in (options.get("conninfo") or {}).items()},
        )
        self._db = Database(str(dsn), self.schema, pool)
        self._index = _index_options(options)
        self._db.on_open(lambda conn: ensure_schema(conn, self.schema, self._db.label))
        self._writer = AdvisoryLock(self._db, WRITER, what="being written")
        self._serial = AdvisoryLock(self._db, SERIAL, what="merging a change", fence=True)
        self._claims = KeyClaims(self._db)
        self._queue = PgWorkQueue(self._db)
        self._defer_index = bool(options.get("defer_vector_index", False))
        self._kv: dict[str, PgKVStore] = {}
        self._vectors: dict[str, PgVectorStore] = {}
        self._graph = PgGraphStore(self._db)
        self._doc_status = PgDocStatusStore(self._db)
        self._lexical = PgLexicalIndex(self._db) if options.get("lexical", True) else None

    @property
    def db(self) -> Database:
        """The connection pool (for the work queue and migrations)."""
        return self._db

    @property
    def label(self) -> str:
        """``postgres workspace <schema> (<dsn without password>)``."""
        return self._db.label

    # -- lifecycle ---------------------------------------------------------------

    async def open(self) -> None:
        await self._db.open()

    async def close(self) -> None:
        await self._db.close()

    async def __aenter__(self) -> PostgresStorage:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def exists(self) -> bool:
        """Whether the workspace holds an index (its schema); opening creates one."""
        return bool(await self._db.once(schema_exists, self.schema))

    async def destroy(self) -> None:
        """Delete the whole workspace (schema and rows), open or closed; opening creates it anew."""
        await self._db.once(drop_schema, self.schema)

    async def drop(self) -> None:
        """Delete the whole workspace and close."""
        await self.destroy()
        await self.close()

    def transaction(self) -> AbstractAsyncContextManager[None]:
        return self._db.transaction()

    def writer(
        self,
        *,
        wait: bool = True,
        on_wait: Callable[[str], None] | None = None,
        shared: bool = False,
    ) -> AbstractAsyncContextManager[None]:
        """The writer lease; ``shared``: alongside other shared holders (workers)."""
        return self._writer.hold(wait=wait, on_wait=on_wait, shared=shared)

    def serial(self) -> AbstractAsyncContextManager[None]:
        """The read-plan-write section of a change, one at a time across processes."""
        return self._serial.hold()

    def claim_keys(self, keys: list[str], limit: int) -> AbstractAsyncContextManager[list[str]]:
        """Up to ``limit`` of ``keys`` no other process holds, for the block (summaries)."""
        return self._claims.claim(keys, limit)

    @property
    def queue(self) -> PgWorkQueue:
        """The work queue over the document status table (workers)."""
        return self._queue

    # -- roles -------------------------------------------------------------------

    def kv(self, namespace: str) -> PgKVStore:
        if namespace not in self._kv:
            self._kv[namespace] = PgKVStore(self._db, namespace)
        return self._kv[namespace]

    def vectors(self, namespace: str) -> PgVectorStore:
        if namespace not in self._vectors:
            self._vectors[namespace] = PgVectorStore(
                self._db, namespace, defer_index=self._defer_index, index=self._index
            )
        return self._vectors[namespace]

    async def build_vector_indexes(self) -> list[str]:
        """After a bulk load (``defer_vector_index``): every missing HNSW index."""
        return await self._db.write(build_indexes, self._index)

    @property
    def graph(self) -> PgGraphStore:
        return self._graph

    @property
    def doc_status(self) -> PgDocStatusStore:
        return self._doc_status

    @property
    def lexical(self) -> PgLexicalIndex | None:
        return self._lexical

    # -- what is stored (migrations) ----------------------------------------------

    async def kv_namespaces(self) -> list[str]:
        """Every key-value namespace holding a key, sorted."""
        return await self._db.read(kv_namespaces)

    async def vector_namespaces(self) -> list[str]:
        """Every vector namespace ever created, sorted."""
        return await self._db.read(vector_namespaces)

    async def meta_keys(self) -> list[str]:
        """Every meta key, sorted."""
        return await self._db.read(_meta_keys)

    # -- meta --------------------------------------------------------------------

    async def get_meta(self, key: str) -> object:
        return await self._db.read(_get_meta, key)

    async def set_meta(self, key: str, value: object) -> None:
        await self._db.write(_set_meta, key, codec.encode(value))


def _index_options(options: PostgresOptions) -> IndexOptions:
    default = IndexOptions()
    return IndexOptions(
        rows=int(options.get("index_rows", default.rows)),
        m=int(options.get("hnsw_m", default.m)),
        ef_construction=int(options.get("hnsw_ef_construction", default.ef_construction)),
        ef_search=int(options.get("hnsw_ef_search", default.ef_search)),
    )


async def _meta_keys(conn: Conn) -> list[str]:
    cur = await conn.execute("SELECT key FROM meta ORDER BY key")
    return [row[0] for row in await cur.fetchall()]


async def _get_meta(conn: Conn, key: str) -> object:
    row = await (await conn.execute("SELECT value FROM meta WHERE key = %s", (key,))).fetchone()
    return None if row is None else codec.decode(row[0])


async def _set_meta(conn: Conn, key: str, cell: bytes) -> None:
    await conn.execute(
        "INSERT INTO meta (key, value) VALUES (%s, %s) "
        "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        (key, cell),
    )
