"""The database schema of the SQLite backend, its version check and upgrades.

Every role lives in one database. Vector namespaces each get their own
table (``vec_<id>``, listed in ``vector_spaces``) so that loading one
namespace into memory is a sequential scan of just its rows.

``node_degree`` holds the degree of every name that has edges; the graph
store keeps it current in each edge write (see
:mod:`~kgrag.storage.sqlite.graph`), so a degree is one index probe.

Versions: 1 had no ``node_degree``; 2 kept it with triggers (too slow
inside savepoints). Opening an older file creates the table, drops the
triggers and counts every degree once, in the same transaction as the
version bump.
"""

from __future__ import annotations

import sqlite3

from kgrag.errors import StorageError

SCHEMA_VERSION = 3

DDL = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS kv (
    ns    TEXT NOT NULL,
    key   TEXT NOT NULL,
    value NOT NULL,
    PRIMARY KEY (ns, key)
);
CREATE TABLE IF NOT EXISTS vector_spaces (
    id    INTEGER PRIMARY KEY,
    ns    TEXT NOT NULL UNIQUE,
    dim   INTEGER NOT NULL,
    dtype TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS nodes (
    name TEXT PRIMARY KEY,
    data NOT NULL
);
CREATE TABLE IF NOT EXISTS edges (
    a      TEXT NOT NULL,
    b      TEXT NOT NULL,
    weight REAL NOT NULL,
    data   NOT NULL,
    PRIMARY KEY (a, b)
);
CREATE INDEX IF NOT EXISTS edges_b ON edges (b);
CREATE TABLE IF NOT EXISTS node_degree (
    name   TEXT PRIMARY KEY,
    degree INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS doc_status (
    id          TEXT PRIMARY KEY,
    status      TEXT NOT NULL,
    enqueue_seq INTEGER NOT NULL,
    data        NOT NULL
);
CREATE INDEX IF NOT EXISTS doc_status_seq ON doc_status (enqueue_seq);
CREATE INDEX IF NOT EXISTS doc_status_status ON doc_status (status, enqueue_seq);
CREATE TABLE IF NOT EXISTS lexical_docs (
    rowid  INTEGER PRIMARY KEY,
    id     TEXT NOT NULL UNIQUE,
    tokens BLOB NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS lexical_fts USING fts5 (
    body, content='', tokenize='unicode61 remove_diacritics 2'
);
"""


def vector_table_ddl(table: str) -> str:
    """DDL of one vector namespace's table."""
    return (
        f"CREATE TABLE IF NOT EXISTS {table} ("
        "id TEXT PRIMARY KEY, vec BLOB NOT NULL, meta NOT NULL)"
    )


def ensure_schema(conn: sqlite3.Connection, label: str) -> None:
    """Create missing tables, check the stored schema version and upgrade old files."""
    row = conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name='meta'"
    ).fetchone()
    stored = _stored_version(conn) if row is not None else None
    if stored is not None and stored > SCHEMA_VERSION:
        raise StorageError(
            f"{label} uses schema version {stored}, newer than this kgrag "
            f"understands ({SCHEMA_VERSION}); upgrade kgrag to open it"
        )
    if stored == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in DDL.split(";"):
            if statement.strip():
                conn.execute(statement)
        if stored is not None:
            _upgrade(conn, stored)
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('schema_version', ?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (str(SCHEMA_VERSION),),
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _stored_version(conn: sqlite3.Connection) -> int | None:
    found = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    return None if found is None else int(found[0])


def _upgrade(conn: sqlite3.Connection, stored: int) -> None:
    """Bring an older file up to date (missing tables are already created)."""
    if stored < 3:  # 1: no node_degree; 2: node_degree kept by triggers
        conn.execute("DROP TRIGGER IF EXISTS edges_degree_add")
        conn.execute("DROP TRIGGER IF EXISTS edges_degree_remove")
        count_degrees(conn)


def count_degrees(conn: sqlite3.Connection) -> None:
    """Fill ``node_degree`` from ``edges`` (a self-loop counts once)."""
    conn.execute("DELETE FROM node_degree")
    conn.execute(
        "INSERT INTO node_degree(name, degree) SELECT n, COUNT(*) FROM ("
        "SELECT a AS n FROM edges UNION ALL SELECT b FROM edges WHERE b != a"
        ") GROUP BY n"
    )
