"""Schema versions of the SQLite backend: upgrading old files, refusing newer ones."""

import sqlite3

import pytest

from kgrag.errors import StorageError
from kgrag.storage.sqlite import SQLiteStorage
from kgrag.storage.sqlite.schema import DDL, SCHEMA_VERSION, statements


async def opened(workdir) -> SQLiteStorage:
    storage = SQLiteStorage(workdir)
    await storage.open()
    return storage


def make_version_1(path) -> None:
    """Turn a current file back into what version 1 wrote (no degree table)."""
    conn = sqlite3.connect(path)
    conn.executescript(
        "DROP TRIGGER edges_degree_add; DROP TRIGGER edges_degree_remove; "
        "DROP TABLE node_degree; UPDATE meta SET value='1' WHERE key='schema_version';")
    conn.close()


async def test_version_1_file_gets_degrees_on_open(tmp_path):
    s = await opened(tmp_path)
    await s.graph.upsert_edges({("a", "b"): {}, ("a", "c"): {}, ("c", "c"): {}, ("x", "y"): {}})
    await s.close()
    make_version_1(tmp_path / "kgrag.db")

    s = await opened(tmp_path)
    assert await s.get_meta("schema_version") == SCHEMA_VERSION == 2
    assert await s.graph.node_degrees(list("abcxyz")) == {"a": 2, "b": 1, "c": 2, "x": 1, "y": 1, "z": 0}
    await s.graph.upsert_edges({("b", "z"): {}})  # the triggers are back too
    await s.graph.delete_nodes(["a"])
    assert await s.graph.node_degrees(list("abcz")) == {"a": 0, "b": 1, "c": 1, "z": 1}
    await s.close()


async def test_newer_file_is_refused(tmp_path):
    s = await opened(tmp_path)
    await s.set_meta("schema_version", SCHEMA_VERSION + 1)
    await s.close()
    with pytest.raises(StorageError, match="newer"):
        await opened(tmp_path)


def test_statements_keep_trigger_bodies_whole():
    found = statements(DDL)
    triggers = [s for s in found if s.startswith("CREATE TRIGGER")]
    assert len(triggers) == 2 and all(s.endswith("END;") for s in triggers)
    assert all(sqlite3.complete_statement(s) for s in found)
