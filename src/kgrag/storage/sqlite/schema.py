"""The database schema of the SQLite backend and its version check.

Every role lives in one database. Vector namespaces each get their own
table (``vec_<id>``, listed in ``vector_spaces``) so that loading one
namespace into memory is a sequential scan of just its rows.
"""

from __future__ import annotations

import sqlite3

from kgrag.errors import StorageError

SCHEMA_VERSION = 1

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
    """Create missing tables and check the stored schema version."""
    row = conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name='meta'"
    ).fetchone()
    if row is not None:
        found = conn.execute(
            "SELECT value FROM meta WHERE key='schema_version'"
        ).fetchone()
        if found is not None and int(found[0]) > SCHEMA_VERSION:
            raise StorageError(
                f"{label} uses schema version {found[0]}, newer than this kgrag "
                f"understands ({SCHEMA_VERSION}); upgrade kgrag to open it"
            )
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in DDL.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute(
            "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
            (str(SCHEMA_VERSION),),
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
