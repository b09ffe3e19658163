"""Workspace-wide locks of the PostgreSQL backend: session advisory locks.

A lock is ``pg_advisory_lock(hashtext(schema name), slot)`` held on a pooled
connection of its own for the whole block, so it spans transactions and
the server frees it when the holder's connection ends, however the
holder dies (``kill -9`` closes the socket; a vanished machine is found
by TCP keepalive; a server restart ends every session, and with it
the lock: releasing it then is a no-op). Every process connects with ``application_name`` set to
its host, pid and command line, which is how a waiter names the holder.

Slots:

- :data:`WRITER`: the writer lease (``Storage.writer()``), exclusive for
  whole-workspace operations; workers hold it shared (see
  :mod:`kgrag.queue`), so a rebuild waits for them and they for it;
- :data:`SERIAL`: the read-plan-write section of a change
  (``Storage.serial()``), exclusive and short: what one change reads, the
  next one sees. It is *fenced*: a transaction inside the block commits
  only if the lock's session (pid and start time) still holds it, checked
  just before the commit, so a change planned before a server restart
  (which ended the session and freed the lock) is refused rather than
  committed over one planned since (:meth:`Database.fenced`);
- :class:`KeyClaims`: single keys (the deferred summaries), tried without
  waiting, so workers share them out.

Within a process the in-process layer of :class:`~kgrag.storage.lease.WriterLease`
applies first: the holding task and tasks it starts re-enter without
waiting. The server side of a shared lock counts holders; the
in-process layer makes one process hold it once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from kgrag.errors import WorkdirBusyError
from kgrag.storage.lease import WriterLease
from kgrag.storage.postgres.db import Conn, Database, Fence, fetch_one
from kgrag.storage.postgres.reconnect import is_lost

WRITER = 1
SERIAL = 2

OnWait = Callable[[str], None] | None


class AdvisoryLock:
    """One slot of the workspace's advisory locks (see the module docstring)."""

    def __init__(self, db: Database, slot: int, *, what: str, fence: bool = False):
        self.db, self.slot, self.what = db, slot, what
        self.fence = fence  # transactions in the block commit only while the lock is held
        self._local = WriterLease(None)
        self._shared_local = WriterLease(None)

    def held(self) -> bool:
        return self._local.held() or self._shared_local.held()

    @asynccontextmanager
    async def hold(
        self, *, wait: bool = True, on_wait: OnWait = None, shared: bool = False
    ) -> AsyncIterator[None]:
        """Hold the lock for the block (``shared``: with other shared holders)."""
        if self.held():
            yield
            return
        local = self._shared_local if shared else self._local
        async with local.hold(), self.db.connection(check=True) as conn:
            try:
                await self._acquire(conn, wait, on_wait, shared)
            except BaseException:  # cancelled while waiting: the lock may have been granted
                await conn.close()  # ending the session frees it; the pool drops the connection
                raise
            try:
                async with self._fenced(conn):
                    yield
            finally:
                unlock = "pg_advisory_unlock_shared" if shared else "pg_advisory_unlock"
                await asyncio.shield(self._release(conn, unlock))

    @asynccontextmanager
    async def _fenced(self, conn: Conn) -> AsyncIterator[None]:
        if not self.fence:
            yield
            return
        cur = await conn.execute(
            "SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()"
        )
        pid, started = await fetch_one(cur)
        with self.db.fenced(Fence(self.slot, pid, started)):
            yield

    async def _release(self, conn: Conn, function: str) -> None:
        """Unlock, unless the session already ended (and took the lock with it)."""
        import psycopg

        if conn.closed:
            return
        try:
            await self._call(conn, function)
        except psycopg.OperationalError as exc:
            if not is_lost(exc):
                raise

    async def _call(self, conn: Conn, function: str) -> bool:
        # keyed by the schema's name, not current_schema(): the key must not change
        # when the workspace is deleted under the lease (kgrag index --reset-if-...)
        sql = f"SELECT {function}(hashtext(%s), {self.slot})"
        return bool((await fetch_one(await conn.execute(sql, (self.db.schema,))))[0])

    async def _acquire(self, conn: Conn, wait: bool, on_wait: OnWait, shared: bool) -> None:
        """Take the lock; when busy, fail (``wait=False``) or queue for it on the server.

        Waiting is ``pg_advisory_lock`` itself, not polling: the server hands
        the lock to the next waiter the moment it is freed, which matters for
        the change section, taken by every commit of every worker.
        """
        suffix = "_shared" if shared else ""
        if await self._call(conn, f"pg_try_advisory_lock{suffix}"):
            return
        busy = f"{self.db.schema} is {self.what} by {await self._holders(conn)}"
        if not wait:
            raise WorkdirBusyError(f"{busy}; wait for it or run again without --no-wait")
        if on_wait is not None:
            on_wait(f"{busy}; waiting until it finishes")
        await conn.execute(
            f"SELECT pg_advisory_lock{suffix}(hashtext(%s), {self.slot})", (self.db.schema,)
        )

    async def _holders(self, conn: Conn) -> str:
        rows = await (
            await conn.execute(
                "SELECT a.application_name, a.client_addr FROM pg_locks l "
                "JOIN pg_stat_activity a ON a.pid = l.pid "
                "WHERE l.locktype = 'advisory' AND l.granted "
                "AND l.classid = hashtext(%s)::oid "
                "AND l.objid = %s AND l.objsubid = 2",
                (self.db.schema, self.slot),
            )
        ).fetchall()
        names = sorted({str(r[0] or r[1] or "?") for r in rows})
        return ", ".join(names) if names else "another process"


class KeyClaims:
    """Session advisory locks on single keys, taken without waiting (see :meth:`claim`)."""

    def __init__(self, db: Database):
        self.db = db

    @asynccontextmanager
    async def claim(self, keys: list[str], limit: int) -> AsyncIterator[list[str]]:
        """Up to ``limit`` of ``keys`` that no other holder has, locked for the block.

        Several workers writing the deferred summaries each get a share of
        the keys: none waits for another, none does a key twice.
        """
        async with self.db.connection(check=True) as conn:
            cur = await conn.execute(
                "SELECT k FROM unnest(%s::text[]) WITH ORDINALITY AS t(k, i) "
                "WHERE pg_try_advisory_lock(hashtextextended(%s || chr(31) || k, 0)) "
                "ORDER BY i LIMIT %s",
                (keys, self.db.schema, limit),
            )
            mine = [row[0] for row in await cur.fetchall()]
            try:
                yield mine
            finally:
                if not conn.closed:  # else the session, and its locks, ended already
                    await asyncio.shield(
                        conn.execute(
                            "SELECT pg_advisory_unlock(hashtextextended(%s || chr(31) || k, 0)) "
                            "FROM unnest(%s::text[]) AS k",
                            (self.db.schema, mine),
                        )
                    )
