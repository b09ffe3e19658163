"""Schema versions of the SQLite backend: upgrading old files, refusing newer ones."""

import sqlite3

import pytest

from kgrag.errors import StorageError
from kgrag.storage.sqlite import SQLiteStorage
from kgrag.storage.sqlite.schema import SCHEMA_VERSION

# What version 2 had on top of version 1: a degree table kept by triggers.
_V2_TRIGGERS = """
CREATE TRIGGER edges_degree_add AFTER INSERT ON edges BEGIN
    INSERT INTO node_degree(name, degree) VALUES (NEW.a, 1)
        ON CONFLICT(name) DO UPDATE SET degree = degree + 1;
    INSERT INTO node_degree(name, degree) SELECT NEW.b, 1 WHERE NEW.b != NEW.a
        ON CONFLICT(name) DO UPDATE SET degree = degree + 1;
END;
CREATE TRIGGER edges_degree_remove AFTER DELETE ON edges BEGIN
    UPDATE node_degree SET degree = degree - 1 WHERE name = OLD.a;
    UPDATE node_degree SET degree = degree - 1 WHERE name = OLD.b AND OLD.b != OLD.a;
    DELETE FROM node_degree WHERE name IN (OLD.a, OLD.b) AND degree <= 0;
END;
"""


async def opened(workdir) -> SQLiteStorage:
    storage = SQLiteStorage(workdir)
    await storage.open()
    return storage


def downgrade(path, version: int) -> None:
    """Turn a current file back into what ``version`` wrote."""
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(version),))
    if version == 1:
        conn.execute("DROP TABLE node_degree")
    else:
        conn.execute("UPDATE node_degree SET degree = degree + 5")  # stale: must be recounted
        conn.executescript(_V2_TRIGGERS)
    conn.commit()
    conn.close()


@pytest.mark.parametrize("version", [1, 2])
async def test_older_file_gets_degrees_counted_on_open(tmp_path, version):
    s = await opened(tmp_path)
    await s.graph.upsert_edges({("a", "b"): {}, ("a", "c"): {}, ("c", "c"): {}, ("x", "y"): {}})
    await s.close()
    downgrade(tmp_path / "kgrag.db", version)

    s = await opened(tmp_path)
    assert await s.get_meta("schema_version") == SCHEMA_VERSION == 3
    assert await s.graph.node_degrees(list("abcxyz")) == {
        "a": 2,
        "b": 1,
        "c": 2,
        "x": 1,
        "y": 1,
        "z": 0,
    }
    await s.graph.upsert_edges({("b", "z"): {}, ("b", "a"): {"weight": 2.0}})  # counted once
    await s.graph.delete_nodes(["a"])
    assert await s.graph.node_degrees(list("abcz")) == {"a": 0, "b": 1, "c": 1, "z": 1}
    await s.close()
    conn = sqlite3.connect(tmp_path / "kgrag.db")
    assert conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE type='trigger'").fetchone() == (
        0,
    )
    conn.close()


async def test_newer_file_is_refused(tmp_path):
    s = await opened(tmp_path)
    await s.set_meta("schema_version", SCHEMA_VERSION + 1)
    await s.close()
    with pytest.raises(StorageError, match="newer"):
        await opened(tmp_path)
