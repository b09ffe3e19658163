"""The SQLite backend: every role in one database file.

``<workdir>/kgrag.db`` in WAL mode with ``synchronous=NORMAL``: a commit
appends to the write-ahead log without an fsync, so a process crash never
loses a committed transaction and a power cut may lose only the last ones,
never consistency. Every write touches only the rows it changes.

Several processes may use one working directory:

- **one writer at a time**: :meth:`SQLiteStorage.writer` is an exclusive
  lease, an ``flock`` on ``<workdir>/kgrag.lock`` plus an in-process lock
  (see :mod:`kgrag.storage.lease`). Writers take it around their work;
  the kernel drops it when the holder dies, even by ``kill -9``. Plain
  writes do not check for it: SQLite itself serialises transactions, and
  the lease is what keeps two indexing runs from interleaving documents.
- **readers follow other processes' commits**: every read first checks
  ``PRAGMA data_version`` (one cheap statement); if another connection
  committed since, the in-memory vector matrices and cached rows are
  dropped and reload on next use (see :mod:`kgrag.storage.sqlite.db`).
  A process's own commits never trigger that.
- **no torn reads**: every read call runs in one WAL read transaction
  (one snapshot), so it sees all of another process's transaction or
  none of it, in SQL rows and matrices alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TypedDict, Unpack

from kgrag.errors import ConfigError, StorageError
from kgrag.storage.base import Capability
from kgrag.storage.lease import LOCK_FILENAME, WriterLease
from kgrag.storage.sqlite import codec
from kgrag.storage.sqlite.db import Database
from kgrag.storage.sqlite.doc_status import SQLiteDocStatusStore
from kgrag.storage.sqlite.graph import SQLiteGraphStore
from kgrag.storage.sqlite.kv import SQLiteKVStore
from kgrag.storage.sqlite.lexical import SQLiteLexicalIndex
from kgrag.storage.sqlite.vectors import DTYPES, SQLiteVectorStore

DB_FILENAME = "kgrag.db"


class SQLiteOptions(TypedDict, total=False):
    """The options of :class:`SQLiteStorage` (its docstring says what each does)."""

    vector_dtype: str
    vector_screen_rows: int
    busy_timeout_ms: int
    cache_mb: int
    lexical: bool


_OPTIONS = set(SQLiteOptions.__annotations__)


class SQLiteStorage:
    """Every storage role for one working directory, in SQLite.

    Options: ``vector_dtype`` (``"float32"``, default, or ``"float16"``:
    on-disk precision of new vector namespaces), ``vector_screen_rows``
    (default 0: exact search always; N: namespaces of at least N vectors
    search a projected pre-screen first, approximate, see
    :mod:`~kgrag.storage.sqlite.screen`), ``busy_timeout_ms`` (default
    5000), ``cache_mb`` (SQLite page cache, default 64) and ``lexical``
    (default ``True``: keep the BM25 index).
    """

    name = "sqlite"
    capabilities: frozenset[Capability] = frozenset()  # one writer; nothing optional
    workspace: str | None = None

    def __init__(self, workdir: Path, *, in_memory: bool = False, **options: Unpack[SQLiteOptions]):
        unknown = set(options) - _OPTIONS
        if unknown:
            raise ConfigError(
                f"unknown sqlite storage option(s): {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(_OPTIONS))}"
            )
        self.workdir = Path(workdir)
        self.path = None if in_memory else self.workdir / DB_FILENAME
        self._dtype = options.get("vector_dtype", "float32")
        self._screen_rows = int(options.get("vector_screen_rows", 0) or 0)
        if self._dtype not in DTYPES:
            raise ConfigError(f"vector_dtype must be one of {DTYPES}, not {self._dtype!r}")
        self._db = Database(
            self.path,
            busy_timeout_ms=options.get("busy_timeout_ms", 5000),
            cache_mb=options.get("cache_mb", 64),
        )
        self._lease = WriterLease(None if in_memory else self.workdir / LOCK_FILENAME)
        self._kv: dict[str, SQLiteKVStore] = {}
        self._vectors: dict[str, SQLiteVectorStore] = {}
        self._graph = SQLiteGraphStore(self._db)
        self._doc_status = SQLiteDocStatusStore(self._db)
        self._lexical = SQLiteLexicalIndex(self._db) if options.get("lexical", True) else None

    # -- lifecycle ---------------------------------------------------------------

    async def open(self) -> None:
        """Create the working directory and database if needed, and connect."""
        if self.path is not None:
            try:
                self.workdir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StorageError(
                    f"cannot create working directory {self.workdir}: {exc}"
                ) from exc
        await self._db.open()

    async def close(self) -> None:
        """Close the database; the stores keep working after a new open()."""
        await self._db.close()  # drops every cached matrix as well

    @property
    def label(self) -> str:
        """``sqlite <database file>``, or ``memory <workdir>`` for the in-memory variant."""
        if self.path is not None:
            return f"sqlite {self.path.resolve()}"
        return f"{self.name} {self.workdir.resolve()}"

    async def exists(self) -> bool:
        """Whether the workdir holds an index (its database file); opening creates one."""
        return self.path is None or self.path.is_file()

    async def destroy(self) -> None:
        """Delete the (closed) database and its WAL files: the index is empty afterwards.

        The lock file stays, so a caller may hold the writer lease around this.
        """
        if self.path is not None:
            await asyncio.to_thread(_remove_database, self.path)

    async def __aenter__(self) -> SQLiteStorage:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def transaction(self) -> AbstractAsyncContextManager[None]:
        """Group writes across every role into one atomic transaction."""
        return self._db.transaction()

    def writer(
        self,
        *,
        wait: bool = True,
        on_wait: Callable[[str], None] | None = None,
        shared: bool = False,
    ) -> AbstractAsyncContextManager[None]:
        """The exclusive writer lease of the workdir (see ``Storage.writer``).

        One writer at a time, so ``shared`` is exclusive too. The in-memory
        variant has only the in-process part.
        """
        return self._lease.hold(wait=wait, on_wait=on_wait)

    def serial(self) -> AbstractAsyncContextManager[None]:
        """A no-op: the writer lease already keeps other processes' changes out."""
        return contextlib.nullcontext()

    # -- roles -------------------------------------------------------------------

    def kv(self, namespace: str) -> SQLiteKVStore:
        if namespace not in self._kv:
            self._kv[namespace] = SQLiteKVStore(self._db, namespace)
        return self._kv[namespace]

    def vectors(self, namespace: str) -> SQLiteVectorStore:
        if namespace not in self._vectors:
            self._vectors[namespace] = SQLiteVectorStore(
                self._db, namespace, self._dtype, self._screen_rows
            )
        return self._vectors[namespace]

    @property
    def graph(self) -> SQLiteGraphStore:
        return self._graph

    @property
    def doc_status(self) -> SQLiteDocStatusStore:
        return self._doc_status

    @property
    def lexical(self) -> SQLiteLexicalIndex | None:
        return self._lexical

    # -- what is stored (migrations) ----------------------------------------------

    async def kv_namespaces(self) -> list[str]:
        """Every key-value namespace holding a key, sorted."""
        return await self._db.read(_column, "SELECT DISTINCT ns FROM kv ORDER BY ns")

    async def vector_namespaces(self) -> list[str]:
        """Every vector namespace ever created, sorted."""
        return await self._db.read(_column, "SELECT ns FROM vector_spaces ORDER BY ns")

    async def meta_keys(self) -> list[str]:
        """Every meta key, sorted."""
        return await self._db.read(_column, "SELECT key FROM meta ORDER BY key")

    # -- meta --------------------------------------------------------------------

    async def get_meta(self, key: str) -> object:
        """The JSON value stored under ``key``, or ``None``."""
        return await self._db.read(_get_meta, key)

    async def set_meta(self, key: str, value: object) -> None:
        """Store a small JSON value under ``key``."""
        await self._db.write(_set_meta, key, codec.dumps(value))


def memory_storage(workdir: Path, **options: Unpack[SQLiteOptions]) -> SQLiteStorage:
    """The same backend on a private in-memory database (nothing persists)."""
    storage = SQLiteStorage(workdir, in_memory=True, **options)
    storage.name = "memory"
    return storage


def _remove_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _column(conn: sqlite3.Connection, sql: str) -> list[str]:
    return [row[0] for row in conn.execute(sql)]


def _get_meta(conn: sqlite3.Connection, key: str) -> object:
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return None if row is None else codec.decode(row[0])


def _set_meta(conn: sqlite3.Connection, key: str, text: str) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
        (key, text),
    )
