"""The schema of one PostgreSQL workspace, its version check and upgrades.

A workspace is one PostgreSQL schema (``kgrag_<name>``), so workspaces
never see each other's rows and one database holds any number of them.
Each store module declares the tables of its role (``DDL``); this module
creates them all on open, once per schema version, under a transaction
advisory lock (two processes opening a new workspace at once would
otherwise race in ``CREATE TABLE IF NOT EXISTS``). The version lives in
``meta`` under ``schema_version``; a newer one than this code knows is
refused, an older one upgraded in the same transaction.

The only extension used is pgvector (``vector``); creating it needs a
privileged role once per database, and the error says so.
"""

from __future__ import annotations

from kgrag.errors import StorageError
from kgrag.storage.postgres.db import Conn

SCHEMA_VERSION = 1

META_DDL = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT COLLATE "C" PRIMARY KEY,
    value BYTEA NOT NULL
);
"""


def all_ddl() -> list[str]:
    """Every role's DDL, in creation order."""
    from kgrag.storage.postgres import doc_status, graph, kv, lexical, vectors

    parts = [META_DDL, kv.DDL, vectors.DDL, graph.DDL, doc_status.DDL, lexical.DDL]
    return [s for part in parts for s in part.split(";") if s.strip()]


async def ensure_schema(conn: Conn, schema: str, label: str) -> None:
    """Create the workspace's schema and tables if needed (in the caller's transaction)."""
    await conn.execute("SELECT pg_advisory_xact_lock(hashtext('kgrag schema'), 0)")
    await _extension(conn, label)
    await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    stored = await _stored_version(conn, schema)
    if stored is not None and stored > SCHEMA_VERSION:
        raise StorageError(
            f"{label} uses schema version {stored}, newer than this kgrag understands "
            f"({SCHEMA_VERSION}); upgrade kgrag to open it"
        )
    if stored == SCHEMA_VERSION:
        return
    for statement in all_ddl():
        await conn.execute(statement)
    await conn.execute(
        "INSERT INTO meta (key, value) VALUES ('schema_version', %s) "
        "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        (str(SCHEMA_VERSION).encode(),),
    )


async def _extension(conn: Conn, label: str) -> None:
    cur = await conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
    if await cur.fetchone() is not None:
        return
    try:
        async with conn.transaction():
            await conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
    except Exception as exc:
        raise StorageError(
            f"{label}: the pgvector extension is not installed and this role cannot create it "
            f"({exc}); run CREATE EXTENSION vector once as a privileged role"
        ) from exc


async def _stored_version(conn: Conn, schema: str) -> int | None:
    cur = await conn.execute(
        "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = 'meta'",
        (schema,),
    )
    if await cur.fetchone() is None:
        return None
    cur = await conn.execute("SELECT value FROM meta WHERE key = 'schema_version'")
    row = await cur.fetchone()
    return None if row is None else int(bytes(row[0]).decode())


async def drop_schema(conn: Conn, schema: str) -> None:
    """Delete the workspace: its schema and every table in it."""
    await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


async def schema_exists(conn: Conn, schema: str) -> bool:
    """Whether the workspace's schema exists (nothing is created)."""
    cur = await conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
    return await cur.fetchone() is not None
