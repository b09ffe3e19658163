"""Durability of the SQLite backend: reopen, crash mid-transaction, corruption."""

import asyncio
import contextlib
import os
import signal
import sys
import textwrap

import numpy as np
import pytest

from kgrag.errors import StorageError, StoreCorruptError
from kgrag.storage.sqlite import SQLiteStorage
from kgrag.storage.sqlite.schema import SCHEMA_VERSION
from kgrag.types import DocRecord, DocStatus


async def opened(workdir, **options) -> SQLiteStorage:
    storage = SQLiteStorage(workdir, **options)
    await storage.open()
    return storage


async def test_reopen_preserves_everything(tmp_path):
    s = await opened(tmp_path)
    vecs = np.random.default_rng(1).standard_normal((50, 16))
    async with s.transaction():
        await s.kv("text_chunks").upsert({"c1": {"content": "Bah! Humbug!" * 200}})
        await s.vectors("entities").upsert(
            [f"e{i}" for i in range(50)], vecs, [{"i": i} for i in range(50)]
        )
        await s.graph.upsert_nodes({"Scrooge": {"entity_type": "PERSON"}})
        await s.graph.upsert_edges({("Scrooge", "Marley"): {"weight": 3.0}})
        await s.doc_status.upsert([DocRecord("d1", DocStatus.PROCESSED, "f", 1, "s", 9)])
        await s.lexical.add({"c1": "Bah! Humbug!"})
        await s.set_meta("embedding", {"dim": 16})
    before = await s.vectors("entities").query(vecs[7], 5)
    await s.close()

    s = await opened(tmp_path)
    assert (await s.kv("text_chunks").get("c1"))["content"].startswith("Bah!")
    assert await s.vectors("entities").query(vecs[7], 5) == before
    assert await s.graph.get_edge("Marley", "Scrooge") == {"weight": 3.0}
    assert await s.graph.get_node("Scrooge") == {"entity_type": "PERSON"}
    assert (await s.doc_status.get("d1")).enqueue_seq == 9
    assert await s.doc_status.next_seq() == 10
    assert [i for i, _ in await s.lexical.search("humbug", 3)] == ["c1"]
    assert await s.get_meta("embedding") == {"dim": 16}
    assert await s.get_meta("schema_version") == SCHEMA_VERSION
    await s.close()


async def test_database_uses_wal(tmp_path):
    s = await opened(tmp_path)
    await s.kv("a").upsert({"k": {}})
    assert (tmp_path / "kgrag.db-wal").exists()
    await s.close()


async def test_float16_vectors_persist_and_search(tmp_path):
    s = await opened(tmp_path, vector_dtype="float16")
    vecs = np.random.default_rng(2).standard_normal((20, 32))
    await s.vectors("v").upsert([str(i) for i in range(20)], vecs, [{}] * 20)
    hits = await s.vectors("v").query(vecs[3], 1)
    assert hits[0].id == "3" and hits[0].score == pytest.approx(1.0, abs=1e-3)
    await s.close()
    s = await opened(tmp_path)  # dtype is remembered per namespace
    assert (await s.vectors("v").query(vecs[3], 1))[0].id == "3"
    await s.close()


_WRITER = textwrap.dedent("""
    import asyncio, sys, time
    import numpy as np
    from pathlib import Path
    from kgrag.storage.sqlite import SQLiteStorage

    async def main(workdir):
        s = SQLiteStorage(Path(workdir))
        await s.open()
        for n in range(3):
            async with s.transaction():
                await s.kv("docs").upsert({f"doc{n}": {"n": n}})
                await s.vectors("v").upsert([f"doc{n}"], np.ones((1, 8)), [{}])
                await s.graph.upsert_nodes({f"doc{n}": {}})
        async with s.transaction():
            for i in range(200):
                await s.kv("docs").upsert({f"partial{i}": {"x": "y" * 1000}})
                await s.graph.upsert_nodes({f"partial{i}": {}})
            print("inside", flush=True)
            time.sleep(60)

    asyncio.run(main(sys.argv[1]))
""")


async def test_sigkilled_writer_leaves_only_committed_transactions(tmp_path):
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _WRITER,
        str(tmp_path),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        assert line.decode().strip() == "inside", (await proc.stderr.read()).decode()
    finally:
        with contextlib.suppress(ProcessLookupError):  # it may have died already
            proc.send_signal(signal.SIGKILL)
        await asyncio.wait_for(proc.wait(), 10)
    s = await opened(tmp_path)
    assert await s.kv("docs").keys() == ["doc0", "doc1", "doc2"]
    assert await s.graph.all_node_names() == ["doc0", "doc1", "doc2"]
    assert await s.vectors("v").count() == 3
    await s.kv("docs").upsert({"after": {}})  # and it is writable again
    await s.close()


@pytest.mark.parametrize("garbage", [b"\x00garbage" * 512, os.urandom(8192)])
async def test_corrupt_file_is_reported_clearly(tmp_path, garbage):
    (tmp_path / "kgrag.db").write_bytes(garbage)
    storage = SQLiteStorage(tmp_path)
    with pytest.raises(StoreCorruptError) as info:
        await storage.open()
    message = str(info.value)
    assert str(tmp_path / "kgrag.db") in message and "rebuild" in message


async def test_use_before_open_and_after_close(tmp_path):
    s = SQLiteStorage(tmp_path)
    with pytest.raises(StorageError, match="not open"):
        await s.kv("a").get("k")
    await s.open()
    await s.close()
    await s.close()  # twice is fine
    with pytest.raises(StorageError, match="not open"):
        await s.graph.node_count()
