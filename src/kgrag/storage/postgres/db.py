"""The connection pool of one PostgreSQL workspace, and transactions.

The stores hand this module coroutine functions ``fn(conn, *args)`` (``conn``
a :class:`psycopg.AsyncConnection` whose ``search_path`` is the workspace's
schema), the shape of :mod:`kgrag.storage.sqlite.db`:

- :meth:`Database.read` runs one in a read-only ``REPEATABLE READ``
  transaction (one snapshot for all its statements), or on the connection
  of the transaction the calling task takes part in (it sees that
  transaction's uncommitted rows);
- :meth:`Database.write` runs one atomically: in its own transaction, or
  inside a savepoint of the caller's transaction;
- :meth:`Database.transaction` groups writes on one pooled connection. The
  owner is tracked with a context variable, so nested blocks and tasks
  started inside the block (``asyncio.gather``) join it. Statements of one
  connection never interleave: a lock per transaction serialises the
  tasks that share it.

Durability: a transaction (:meth:`Database.transaction`) commits only once
its WAL is flushed; everything a document's acknowledgement rests on (its
enqueueing, its commit) is written in one. A write outside a transaction
is one of the pipeline's caches and progress marks (an LLM answer, a
``processing`` mark, a lease): it commits with ``synchronous_commit = off``,
visible at once and safe from any client crash, while a crash of the
database server itself may lose the last fraction of a second of them,
which the pipeline redoes. On two cores that saves ~3.5 ms a write, and
a document makes dozens (its LLM cache entries above all).

Connection loss (the server restarted, a network cut): a pooled
connection that broke is dropped, and the pool connects again. A read or
a write of its own is run again whole, with a bounded backoff (50 ms
doubling to 2 s), for up to ``reconnect_s`` (``postgres_reconnect_s``)
before :class:`~kgrag.errors.DatabaseUnavailableError`; a transaction
cannot be re-run here (its block is the caller's), so it fails with
:class:`~kgrag.errors.ConnectionLostError`, which tells the caller that
nothing of it was committed and the work may run again whole (a worker
does: see :mod:`kgrag.indexing.worker`). A transaction and a lock check
their connection before using it, so an idle connection that died with
the server is replaced rather than failing them. A lost connection and
its recovery are logged once each (logger ``kgrag.storage.postgres``).

Unlike the embedded store, transactions of different tasks (and
processes) run at the same time; what must not interleave takes a lock
(:mod:`kgrag.storage.postgres.locks`). Multi-row writes go in key order,
so two transactions writing the same rows wait for each other instead of
deadlocking.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from types import ModuleType
from typing import TYPE_CHECKING, TypeAlias, TypeVar, TypeVarTuple

from kgrag.errors import ConnectionLostError, DatabaseUnavailableError, StorageError
from kgrag.storage.postgres.reconnect import Backoff, is_lost

if TYPE_CHECKING:
    from psycopg import AsyncConnection, AsyncCursor
    from psycopg.rows import TupleRow
    from psycopg_pool import AsyncConnectionPool

T = TypeVar("T")
Ts = TypeVarTuple("Ts")  # the arguments a function run on a connection takes after it
Conn: TypeAlias = "AsyncConnection[TupleRow]"
"""A pooled connection (rows are tuples of the driver's values), as functions run on one get it."""
Pool: TypeAlias = "AsyncConnectionPool[AsyncConnection[TupleRow]]"
Callback = Callable[[], None] | None

log = logging.getLogger("kgrag.storage.postgres")
# psycopg logs each failed reconnection attempt; the loss is reported once, here
logging.getLogger("psycopg").addHandler(logging.NullHandler())

_CHECKOUT_S = 2.0  # one wait for a pooled connection; each new wait lets the pool connect anew


@dataclass(frozen=True, slots=True)
class Fence:
    """A session advisory lock: its slot, and the session holding it (pid, start time)."""

    slot: int
    pid: int
    started: datetime


_FENCES: contextvars.ContextVar[tuple[Fence, ...]] = contextvars.ContextVar(
    "kgrag_pg_fences", default=()
)
_FENCE_SQL = (
    "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
    "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 "
    "AND l.pid = %s AND a.backend_start = %s AND l.objid = %s AND l.classid = hashtext(%s)::oid"
)


@dataclass(slots=True)
class _Active:
    """The transaction a context takes part in: its database, connection and lock."""

    db: Database
    conn: Conn
    lock: asyncio.Lock
    deferred: list[tuple[Callback, Callback]] = field(default_factory=list)  # to run at its end


_ACTIVE: contextvars.ContextVar[_Active | None] = contextvars.ContextVar(
    "kgrag_pg_active", default=None
)


@dataclass(frozen=True, slots=True)
class PoolOptions:
    """Connection pool sizes and timeouts."""

    min_size: int = 1
    max_size: int = 8
    timeout_s: float = 30.0  # waiting for a free connection
    reconnect_s: float = 60.0  # waiting for a lost database to answer again
    conninfo: dict[str, str] | None = None  # libpq parameters added to the DSN (sslmode, ...)


def _psycopg() -> tuple[ModuleType, ModuleType]:
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:  # the optional extra is missing
        raise StorageError(
            "the postgres storage needs psycopg 3 and psycopg_pool: pip install 'kgrag[postgres]'"
        ) from exc
    return psycopg, psycopg_pool


def redact(dsn: str) -> str:
    """``dsn`` without its password (for messages)."""
    psycopg, _ = _psycopg()
    try:
        params = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "<unparsable DSN>"
    params.pop("password", None)
    return " ".join(f"{k}={v}" for k, v in sorted(params.items()) if v)


class Database:
    """A pool of connections to ``dsn``, every one in ``schema``."""

    def __init__(self, dsn: str, schema: str, pool: PoolOptions | None = None):
        self._options = pool or PoolOptions()
        self.dsn, self.schema = _with_params(dsn, self._options.conninfo), schema
        self.label = f"postgres workspace {schema} ({redact(self.dsn)})"
        self._pool: Pool | None = None
        self._setup: list[Callable[[Conn], Awaitable[None]]] = []
        self._lost_since: float | None = None  # when a connection loss was first seen

    def on_open(self, fn: Callable[[Conn], Awaitable[None]]) -> None:
        """Run ``fn(conn)`` once, in a transaction, each time the database opens."""
        self._setup.append(fn)

    # -- lifecycle ---------------------------------------------------------

    async def open(self) -> None:
        """Connect the pool and run the setup functions (schema creation)."""
        if self._pool is not None:
            return
        psycopg, psycopg_pool = _psycopg()
        schema = self.schema

        async def configure(conn: Conn) -> None:
            await conn.execute(f'SET search_path TO "{schema}", public')
            await conn.set_autocommit(True)

        pool = psycopg_pool.AsyncConnectionPool(
            self.dsn,
            min_size=self._options.min_size,
            max_size=self._options.max_size,
            timeout=self._options.timeout_s,
            kwargs={"autocommit": True, "application_name": application_name()},
            configure=configure,
            open=False,
            # give up a failing connection attempt soon: the next checkout starts a new
            # one at once, so a restarted server is found within a checkout's wait
            reconnect_timeout=_CHECKOUT_S,
        )
        try:
            await pool.open(wait=True, timeout=self._options.timeout_s)
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            await pool.close()
            raise StorageError(f"cannot connect to {self.label}: {_reason(exc)}") from exc
        self._pool = pool
        try:
            for fn in self._setup:
                await self.write(fn)
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()

    async def once(self, fn: Callable[[Conn, *Ts], Awaitable[T]], *args: *Ts) -> T:
        """Run ``fn(conn, *args)`` in autocommit, open or not (closed: on a connection of its own).

        For what must not create the workspace: asking whether it exists, deleting it.
        """
        if self._pool is not None:
            async with self.connection() as conn:
                return await fn(conn, *args)
        psycopg, _ = _psycopg()
        try:
            conn = await psycopg.AsyncConnection.connect(
                self.dsn, autocommit=True, application_name=application_name()
            )
        except psycopg.Error as exc:
            raise StorageError(f"cannot connect to {self.label}: {_reason(exc)}") from exc
        async with conn:
            return await self._guard(fn(conn, *args))

    def _require(self) -> Pool:
        if self._pool is None:
            raise StorageError(f"{self.label} is not open; call open() first")
        return self._pool

    # -- connections ---------------------------------------------------------

    @asynccontextmanager
    async def connection(self, *, check: bool = False) -> AsyncIterator[Conn]:
        """A pooled connection of its own (autocommit), errors translated.

        Waits for one through a connection loss (bounded); ``check``: one that
        answers (a round trip), for work that cannot be re-run if it broke.
        """
        psycopg, _ = _psycopg()
        pool = self._require()
        conn = await self._checkout(pool, check)
        try:
            async with conn:  # rolls back on an error, as the pool's own block does
                yield conn
        except psycopg.Error as exc:
            raise self._translate(exc) from exc
        finally:
            await pool.putconn(conn)
        self._regained()  # a no-op unless a loss was seen

    async def _checkout(self, pool: Pool, check: bool) -> Conn:
        psycopg, psycopg_pool = _psycopg()
        backoff = Backoff(max(self._options.timeout_s, self._options.reconnect_s))
        while True:
            try:
                conn = await pool.getconn(timeout=max(0.01, min(_CHECKOUT_S, backoff.left())))
            except psycopg_pool.PoolTimeout as exc:  # busy, or no server to connect to
                error: BaseException = exc
            else:
                if not check:
                    return conn
                try:
                    await pool.check_connection(conn)
                    return conn
                except psycopg.Error as exc:
                    await pool.putconn(conn)  # broken: the pool drops it
                    error = exc
                    self._lost()
            if self._lost_too_long():
                raise self._unavailable() from error
            if not await backoff.sleep():
                raise DatabaseUnavailableError(
                    f"{self.label}: no connection for {backoff.budget_s:.0f} s: {_reason(error)}"
                ) from error

    async def _retrying(self, once: Callable[[*Ts], Awaitable[T]], *args: *Ts) -> T:
        """``once(*args)``, run again whole while it fails by a connection loss (bounded)."""
        backoff = Backoff(self._options.reconnect_s)
        while True:
            try:
                return await once(*args)
            except ConnectionLostError as exc:
                self._lost()
                if self._lost_too_long() or not await backoff.sleep():
                    raise self._unavailable() from exc

    def _lost(self) -> None:
        if self._lost_since is None:
            self._lost_since = time.monotonic()
            log.warning("lost the connection to %s; reconnecting", self.label)

    def _regained(self) -> None:
        if self._lost_since is not None:
            took, self._lost_since = time.monotonic() - self._lost_since, None
            log.warning("connected to %s again after %.1f s", self.label, took)

    def _lost_too_long(self) -> bool:
        """Lost for ``reconnect_s``: from then on a call tries once, not for the whole budget."""
        lost = self._lost_since
        return lost is not None and time.monotonic() - lost > self._options.reconnect_s

    def _unavailable(self) -> DatabaseUnavailableError:
        return DatabaseUnavailableError(
            f"{self.label} did not answer for {self._options.reconnect_s:g} s "
            "(postgres_reconnect_s)"
        )

    def _translate(self, exc: BaseException) -> StorageError:
        if is_lost(exc):
            return ConnectionLostError(f"{self.label}: connection lost: {_reason(exc)}")
        return StorageError(f"{self.label}: {_reason(exc)}")

    def _joined(self) -> _Active | None:
        active = _ACTIVE.get()
        return active if active is not None and active.db is self else None

    async def read(self, fn: Callable[[Conn, *Ts], Awaitable[T]], *args: *Ts) -> T:
        """Run ``fn(conn, *args)`` on one snapshot (see the module docstring)."""
        joined = self._joined()
        if joined is not None:
            async with joined.lock:
                return await self._guard(fn(joined.conn, *args))
        return await self._retrying(self._read_once, fn, args)

    async def _read_once(self, fn: Callable[[Conn, *Ts], Awaitable[T]], args: tuple[*Ts]) -> T:
        async with self.connection() as conn, conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return await fn(conn, *args)

    async def write(
        self,
        fn: Callable[[Conn, *Ts], Awaitable[T]],
        *args: *Ts,
        on_commit: Callback = None,
        on_rollback: Callback = None,
    ) -> T:
        """Run ``fn(conn, *args)`` atomically; ``on_commit`` once it is committed."""
        joined = self._joined()
        if joined is not None:
            async with joined.lock:
                try:
                    async with joined.conn.transaction():  # a savepoint
                        result = await self._guard(fn(joined.conn, *args))
                except BaseException:
                    _run(on_rollback)
                    raise
            joined.deferred.append((on_commit, on_rollback))
            return result
        result = await self._retrying(self._write_once, fn, args, on_rollback)
        _run(on_commit)
        return result

    async def _write_once(
        self, fn: Callable[[Conn, *Ts], Awaitable[T]], args: tuple[*Ts], on_rollback: Callback
    ) -> T:
        try:
            async with self.connection() as conn, conn.transaction():
                await conn.execute("SET LOCAL synchronous_commit = off")  # see the docstring
                return await fn(conn, *args)
        except BaseException:
            _run(on_rollback)
            raise

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """Make every write inside the block one atomic unit."""
        if self._joined() is not None:
            yield
            return
        async with self.connection(check=True) as conn:
            active = _Active(self, conn, asyncio.Lock())
            marker = _ACTIVE.set(active)
            committed = False
            try:
                async with conn.transaction():
                    yield
                    await self._check_fences(conn)
                committed = True
            finally:
                _ACTIVE.reset(marker)
                for on_commit, on_rollback in active.deferred:
                    _run(on_commit if committed else on_rollback)
                active.deferred.clear()

    @contextmanager
    def fenced(self, fence: Fence) -> Iterator[None]:
        """Inside the block, a transaction commits only while ``fence``'s lock is held."""
        token = _FENCES.set((*_FENCES.get(), fence))
        try:
            yield
        finally:
            _FENCES.reset(token)

    async def _check_fences(self, conn: Conn) -> None:
        """Refuse the commit if a lock it was planned under died with its session.

        A server restart ends every session and frees its locks, while the
        holder's reads, retried, go on: without this, a change planned
        before the restart could commit after another one planned since.
        """
        for fence in _FENCES.get():
            params = (fence.pid, fence.started, fence.slot, self.schema)
            cur = await conn.execute(_FENCE_SQL, params)
            if not (await fetch_one(cur))[0]:
                raise ConnectionLostError(
                    f"{self.label}: the lock this change was planned under ended with its "
                    "connection; nothing was committed"
                )

    async def _guard(self, awaitable: Awaitable[T]) -> T:
        psycopg, _ = _psycopg()
        try:
            return await awaitable
        except psycopg.Error as exc:
            raise self._translate(exc) from exc


async def fetch_one(cur: AsyncCursor[TupleRow]) -> TupleRow:
    """The row of a statement that always returns one (``count(*)``, a function call)."""
    row = await cur.fetchone()
    if row is None:
        dbname = cur.connection.info.dbname
        raise StorageError(
            f"database {dbname}: a statement that always returns a row returned none"
        )
    return row


async def scalar(cur: AsyncCursor[TupleRow]) -> int:
    """The integer of a one-row, one-column statement (a count)."""
    return int((await fetch_one(cur))[0])


def _with_params(dsn: str, params: dict[str, str] | None) -> str:
    """``dsn`` with the libpq ``params`` added (they win over the DSN's own)."""
    if not params:
        return dsn
    psycopg, _ = _psycopg()
    try:
        return str(psycopg.conninfo.make_conninfo(dsn, **params))
    except psycopg.ProgrammingError as exc:
        raise StorageError(f"invalid postgres connection settings: {_reason(exc)}") from exc


def application_name() -> str:
    """How this process shows in ``pg_stat_activity``: host, pid and command (63 bytes at most)."""
    from kgrag.storage.lease import command_label

    name = f"kgrag {socket.gethostname()} pid {os.getpid()}: {command_label()}"
    return name.encode()[:63].decode(errors="ignore")


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _run(callback: Callback) -> None:
    if callback is not None:
        callback()


def chunked(items: list[T], size: int = 1000) -> list[list[T]]:
    """``items`` in slices of at most ``size`` (for ``= ANY(%s)`` arrays)."""
    return [items[i : i + size] for i in range(0, len(items), size)]
