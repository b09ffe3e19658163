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

Unlike the embedded store, transactions of different tasks (and
processes) run at the same time; what must not interleave takes a lock
(:mod:`kgrag.storage.postgres.locks`). Multi-row writes go in key order,
so two transactions writing the same rows wait for each other instead of
deadlocking.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from kgrag.errors import StorageError

Fn = Callable[..., Awaitable[Any]]
Callback = Callable[[], None] | None

# (database, connection, lock) of the transaction the current context takes part in.
_ACTIVE: contextvars.ContextVar[tuple[Any, ...] | None] = contextvars.ContextVar(
    "kgrag_pg_active", default=None
)


@dataclass(frozen=True, slots=True)
class PoolOptions:
    """Connection pool sizes and timeouts."""

    min_size: int = 1
    max_size: int = 8
    timeout_s: float = 30.0


def _psycopg():
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
        self.dsn, self.schema = dsn, schema
        self.label = f"postgres workspace {schema} ({redact(dsn)})"
        self._options = pool or PoolOptions()
        self._pool: Any = None
        self._setup: list[Fn] = []

    def on_open(self, fn: Fn) -> None:
        """Run ``fn(conn)`` once, in a transaction, each time the database opens."""
        self._setup.append(fn)

    # -- lifecycle ---------------------------------------------------------

    async def open(self) -> None:
        """Connect the pool and run the setup functions (schema creation)."""
        if self._pool is not None:
            return
        psycopg, psycopg_pool = _psycopg()
        schema = self.schema

        async def configure(conn: Any) -> None:
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

    async def once(self, fn: Fn, *args: Any) -> Any:
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
            return await _guard(self.label, fn(conn, *args))

    def _require(self) -> Any:
        if self._pool is None:
            raise StorageError(f"{self.label} is not open; call open() first")
        return self._pool

    # -- connections ---------------------------------------------------------

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Any]:
        """A pooled connection of its own (autocommit), errors translated."""
        psycopg, psycopg_pool = _psycopg()
        try:
            async with self._require().connection() as conn:
                yield conn
        except psycopg_pool.PoolTimeout as exc:
            raise StorageError(f"{self.label}: no free connection ({exc})") from exc
        except psycopg.Error as exc:
            raise StorageError(f"{self.label}: {_reason(exc)}") from exc

    def _joined(self) -> tuple[Any, asyncio.Lock] | None:
        active = _ACTIVE.get()
        if active is not None and active[0] is self:
            return active[1], active[2]
        return None

    async def read(self, fn: Fn, *args: Any) -> Any:
        """Run ``fn(conn, *args)`` on one snapshot (see the module docstring)."""
        joined = self._joined()
        if joined is not None:
            conn, lock = joined
            async with lock:
                return await _guard(self.label, fn(conn, *args))
        async with self.connection() as conn, conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return await fn(conn, *args)

    async def write(
        self, fn: Fn, *args: Any, on_commit: Callback = None, on_rollback: Callback = None
    ) -> Any:
        """Run ``fn(conn, *args)`` atomically; ``on_commit`` once it is committed."""
        joined = self._joined()
        if joined is not None:
            conn, lock = joined
            async with lock:
                try:
                    async with conn.transaction():  # a savepoint
                        result = await _guard(self.label, fn(conn, *args))
                except BaseException:
                    _run(on_rollback)
                    raise
            _deferred(conn).append((on_commit, on_rollback))
            return result
        try:
            async with self.connection() as conn, conn.transaction():
                await conn.execute("SET LOCAL synchronous_commit = off")  # see the docstring
                result = await fn(conn, *args)
        except BaseException:
            _run(on_rollback)
            raise
        _run(on_commit)
        return result

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """Make every write inside the block one atomic unit."""
        if self._joined() is not None:
            yield
            return
        async with self.connection() as conn:
            conn.kgrag_deferred = []
            marker = _ACTIVE.set((self, conn, asyncio.Lock()))
            committed = False
            try:
                async with conn.transaction():
                    yield
                committed = True
            finally:
                _ACTIVE.reset(marker)
                for on_commit, on_rollback in _deferred(conn):
                    _run(on_commit if committed else on_rollback)
                conn.kgrag_deferred = []


def _deferred(conn: Any) -> list[tuple[Callback, Callback]]:
    return conn.kgrag_deferred


async def _guard(label: str, awaitable: Awaitable[Any]) -> Any:
    psycopg, _ = _psycopg()
    try:
        return await awaitable
    except psycopg.Error as exc:
        raise StorageError(f"{label}: {_reason(exc)}") from exc


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


def chunked(items: list[Any], size: int = 1000) -> list[list[Any]]:
    """``items`` in slices of at most ``size`` (for ``= ANY(%s)`` arrays)."""
    return [items[i : i + size] for i in range(0, len(items), size)]
