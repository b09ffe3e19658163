"""One SQLite connection, its worker thread, and transactions.

All SQL runs on a single worker thread that owns the one connection, so
the event loop never waits on disk and statements never interleave. The
stores hand this module plain functions ``fn(conn, *args)``:

- :meth:`Database.read` runs one at once, whatever transaction is open
  (reads never wait for the write lock; on the shared connection they see
  the open transaction's uncommitted rows);
- :meth:`Database.write` runs one atomically: in its own transaction when
  none is open, or inside a savepoint of the caller's transaction;
- :meth:`Database.transaction` groups writes. An :class:`asyncio.Lock`
  keeps other tasks' writes out until it ends. The owner is tracked with a
  context variable, so nested blocks and tasks started inside the block
  (``asyncio.gather``) join it instead of deadlocking on the lock.

Writes may register callbacks that run on the worker thread once the
outcome is known: ``on_commit`` after the enclosing transaction commits,
``on_rollback`` when it (or the write itself) is rolled back. The vector
stores use them to keep their in-memory matrices equal to committed rows.

Other connections (other processes, or another :class:`Database` on the
same file) commit too. Every read and every write transaction first asks
SQLite for ``PRAGMA data_version``, which changes only when another
connection committed since this connection last asked (this connection's
own commits leave it alone, so a single-process run never reloads). When
it changed, every callback registered with :meth:`Database.on_refresh`
runs (on the worker thread): the vector stores drop their matrices and
cached rows and reload them on next use. A ``RESTART``/``TRUNCATE``
checkpoint by another connection changes it as well: a needless reload,
never a wrong answer. The same callbacks run when the database closes.

A read outside a transaction runs in its own read transaction (``BEGIN``
... ``COMMIT``, no lock taken), opened by that check: all its statements
see one committed state, never part of another connection's commit, and
that state is the one the check saw, so derived caches match it.
"""

from __future__ import annotations

import asyncio
import contextvars
import sqlite3
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar, TypeVarTuple

from kgrag.errors import StorageError, StoreCorruptError
from kgrag.storage.sqlite.schema import ensure_schema

Callback = Callable[[], None] | None
T = TypeVar("T")
Ts = TypeVarTuple("Ts")  # the arguments a function run on the worker thread takes after ``conn``

# Tokens of the transactions the current context (task) takes part in.
_ACTIVE: contextvars.ContextVar[tuple[object, ...]] = contextvars.ContextVar(
    "kgrag_sqlite_active", default=()
)

PAGE_SIZE = 8192  # 5 float32 384-d vector rows or 3 compressed chunks per page
_CORRUPT_HINTS = ("file is not a database", "malformed", "not a database")


class Database:
    """The connection to ``path`` (``None``: a private in-memory database)."""

    def __init__(self, path: Path | None, *, busy_timeout_ms: int = 5000, cache_mb: int = 64):
        self.path = path
        self.label = str(path) if path is not None else "in-memory database"
        self._busy_ms = int(busy_timeout_ms)
        self._cache_mb = int(cache_mb)
        self._conn: sqlite3.Connection | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._lock = asyncio.Lock()
        self._txn: object | None = None
        self._deferred: list[tuple[Callback, Callback]] = []
        self._refreshers: list[Callable[[], None]] = []
        self._data_version: int | None = None
        self.refreshes = 0  # times other connections' commits dropped the caches

    # -- lifecycle ---------------------------------------------------------

    async def open(self) -> None:
        """Connect, apply pragmas and create the schema."""
        if self._executor is not None:
            return
        self._lock = asyncio.Lock()  # bound to the loop that opens the database
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="kgrag-sqlite")
        try:
            await self._call(self._connect)
        except BaseException:
            self._executor.shutdown(wait=False)
            self._executor = None
            raise

    def _connect(self) -> None:
        target = str(self.path) if self.path is not None else ":memory:"
        conn = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
        try:
            conn.execute(f"PRAGMA page_size={PAGE_SIZE}")  # only affects a new file
            if self.path is not None:
                conn.execute("PRAGMA journal_mode=WAL").fetchone()
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA busy_timeout={self._busy_ms}")
            conn.execute(f"PRAGMA cache_size=-{self._cache_mb * 1024}")
            conn.execute("PRAGMA temp_store=MEMORY")
            ensure_schema(conn, self.label)
        except BaseException:
            conn.close()
            raise
        self._conn = conn

    async def close(self) -> None:
        """Close the connection (an open transaction is rolled back)."""
        if self._executor is None:
            return
        try:
            await self._call(self._disconnect)
        finally:
            self._executor.shutdown(wait=True)
            self._executor = None

    def _disconnect(self) -> None:
        if self._conn is not None:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            self._conn.close()
            self._conn = None
        self._data_version = None
        self._drop_derived()

    # -- following other connections' commits --------------------------------

    def on_refresh(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` (worker thread) whenever cached state may be stale.

        That is: when another connection's commit is noticed, and on close.
        """
        self._refreshers.append(callback)

    def _follow_others(self, conn: sqlite3.Connection) -> None:
        """Drop derived caches if another connection committed since last time."""
        (version,) = conn.execute("PRAGMA data_version").fetchone()
        if version != self._data_version:
            if self._data_version is not None:
                self.refreshes += 1
                self._drop_derived()
            self._data_version = version

    def _drop_derived(self) -> None:
        for callback in self._refreshers:
            callback()

    # -- running functions on the worker thread ------------------------------

    async def _call(self, fn: Callable[[*Ts], T], *args: *Ts) -> T:
        if self._executor is None:
            raise StorageError(f"{self.label} is not open; call open() first")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._guarded, fn, args)

    def _guarded(self, fn: Callable[[*Ts], T], args: tuple[*Ts]) -> T:
        try:
            return fn(*args)
        except sqlite3.DatabaseError as exc:
            raise self._translate(exc) from exc
        except sqlite3.Error as exc:
            raise StorageError(f"{self.label}: {exc}") from exc

    def _translate(self, exc: sqlite3.DatabaseError) -> StorageError:
        text = str(exc)
        if any(hint in text for hint in _CORRUPT_HINTS):
            return StoreCorruptError(
                f"{self.label} is damaged or is not a kgrag database ({text}). "
                "Move the file aside (keep it for inspection) and rebuild the "
                "index from your documents, or restore it from a backup."
            )
        return StorageError(f"{self.label}: {text}")

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StorageError(f"{self.label} is not open; call open() first")
        return self._conn

    async def read(self, fn: Callable[[sqlite3.Connection, *Ts], T], *args: *Ts) -> T:
        """Run ``fn(conn, *args)`` now; never waits for the write lock."""
        return await self._call(self._read, fn, args)

    def _read(self, fn: Callable[[sqlite3.Connection, *Ts], T], args: tuple[*Ts]) -> T:
        conn = self._connection()
        if conn.in_transaction:  # an open write transaction: join what it sees
            self._follow_others(conn)
            return fn(conn, *args)
        conn.execute("BEGIN")  # one snapshot for every statement of fn
        try:
            self._follow_others(conn)  # its first read starts the snapshot
            return fn(conn, *args)
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")

    # -- writes --------------------------------------------------------------

    def _owns_transaction(self) -> bool:
        return self._txn is not None and self._txn in _ACTIVE.get()

    async def write(
        self,
        fn: Callable[[sqlite3.Connection, *Ts], T],
        *args: *Ts,
        on_commit: Callback = None,
        on_rollback: Callback = None,
    ) -> T:
        """Run ``fn(conn, *args)`` atomically (see the module docstring)."""
        if self._owns_transaction():
            return await self._call(self._write_nested, fn, args, on_commit, on_rollback)
        async with self._lock:
            return await self._call(self._write_alone, fn, args, on_commit, on_rollback)

    def _write_alone(
        self,
        fn: Callable[[sqlite3.Connection, *Ts], T],
        args: tuple[*Ts],
        on_commit: Callback,
        on_rollback: Callback,
    ) -> T:
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._follow_others(conn)
            result = fn(conn, *args)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            _run(on_rollback)
            raise
        _run(on_commit)
        return result

    def _write_nested(
        self,
        fn: Callable[[sqlite3.Connection, *Ts], T],
        args: tuple[*Ts],
        on_commit: Callback,
        on_rollback: Callback,
    ) -> T:
        conn = self._connection()
        conn.execute("SAVEPOINT kgrag_write")
        try:
            result = fn(conn, *args)
        except BaseException:
            conn.execute("ROLLBACK TO kgrag_write")
            conn.execute("RELEASE kgrag_write")
            _run(on_rollback)
            raise
        conn.execute("RELEASE kgrag_write")
        self._deferred.append((on_commit, on_rollback))
        return result

    # -- transactions ----------------------------------------------------------

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """Make every write inside the block one atomic unit."""
        if self._owns_transaction():
            yield  # nested: join the outer transaction
            return
        async with self._lock:
            await self._call(self._begin)
            token = object()
            self._txn = token
            marker = _ACTIVE.set((*_ACTIVE.get(), token))
            try:
                yield
            except BaseException:
                await asyncio.shield(self._call(self._finish, False))
                raise
            else:
                await asyncio.shield(self._call(self._finish, True))
            finally:
                self._txn = None
                _ACTIVE.reset(marker)

    def _begin(self) -> None:
        self._deferred.clear()
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._follow_others(conn)
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _finish(self, commit: bool) -> None:
        conn = self._connection()
        deferred, self._deferred = self._deferred, []
        if commit:
            try:
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                for _, on_rollback in reversed(deferred):
                    _run(on_rollback)
                raise
            for on_commit, _ in deferred:
                _run(on_commit)
        else:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            for _, on_rollback in reversed(deferred):
                _run(on_rollback)


def _run(callback: Callback) -> None:
    if callback is not None:
        callback()


def chunked(items: list[T], size: int = 500) -> list[list[T]]:
    """``items`` in slices of at most ``size`` (for ``IN (...)`` lists)."""
    return [items[i : i + size] for i in range(0, len(items), size)]


def marks(n: int) -> str:
    """``?,?,...`` with ``n`` placeholders."""
    return ",".join("?" * n)
