"""Several processes on one workdir: the writer lease and readers following commits.

The other "process" is a real subprocess (``python -c``) where the kernel's
behaviour matters (flock, kill -9); a second :class:`SQLiteStorage` on the
same file is another connection too, which is enough for data_version.
"""

import asyncio
import json
import os
import signal
import sqlite3
import sys
import textwrap

import numpy as np
import pytest

from kgrag.errors import WorkdirBusyError
from kgrag.storage.lease import LOCK_FILENAME, command_label
from kgrag.storage.sqlite import DB_FILENAME, SQLiteStorage, memory_storage

_HOLDER = textwrap.dedent("""
    import asyncio, sys
    from pathlib import Path
    from kgrag.storage.sqlite import SQLiteStorage

    async def main(workdir):
        async with SQLiteStorage(Path(workdir)).writer(wait=False):
            print("holding", flush=True)
            sys.stdin.readline()  # hold until told (or killed)

    asyncio.run(main(sys.argv[1]))
""")

_WRITER = textwrap.dedent("""
    import asyncio, sys
    import numpy as np
    from pathlib import Path
    from kgrag.storage.sqlite import SQLiteStorage

    async def main(workdir):
        async with SQLiteStorage(Path(workdir)) as s, s.writer():
            async with s.transaction():
                await s.vectors("v").upsert(["new"], np.array([[0.0, 1.0]]), [{"by": "child"}])
                await s.vectors("v").delete(["b"])

    asyncio.run(main(sys.argv[1]))
""")

BATCH = 40
_BATCHES = textwrap.dedent(f"""
    import asyncio, sys
    import numpy as np
    from pathlib import Path
    from kgrag.storage.sqlite import SQLiteStorage

    async def main(workdir, rounds):
        async with SQLiteStorage(Path(workdir)) as s, s.writer():
            print("writing", flush=True)
            rng = np.random.default_rng(0)
            for gen in range(rounds):  # each round replaces every vector at once
                ids = [f"g{{gen}}_{{i}}" for i in range({BATCH})]
                async with s.transaction():
                    await s.vectors("v").delete([f"g{{gen - 1}}_{{i}}" for i in range({BATCH})])
                    await s.vectors("v").upsert(ids, rng.standard_normal(({BATCH}, 8)),
                                                [{{"gen": gen}}] * {BATCH})
                    await s.kv("docs").upsert({{i: {{"gen": gen}} for i in ids}})

    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
""")


async def spawn(script: str, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        script,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def expect_line(proc: asyncio.subprocess.Process, text: str) -> None:
    line = await asyncio.wait_for(proc.stdout.readline(), 30)
    if line.decode().strip() != text:
        raise AssertionError((await proc.stderr.read()).decode())


async def finish(proc: asyncio.subprocess.Process) -> None:
    """Let a holder go (or reap a process that already exited)."""
    if proc.returncode is None:
        try:
            proc.stdin.close()
        except (BrokenPipeError, ConnectionResetError):
            pass
        await asyncio.wait_for(proc.wait(), 30)


@pytest.fixture
async def holder(tmp_path):
    """A subprocess holding the writer lease of ``tmp_path`` until its stdin closes."""
    proc = await spawn(_HOLDER, str(tmp_path))
    await expect_line(proc, "holding")
    yield proc
    if proc.returncode is None:
        proc.kill()
    await proc.wait()


async def enter(storage: SQLiteStorage, **kwargs) -> bool:
    async with storage.writer(**kwargs):
        return True


# -- the writer lease ------------------------------------------------------------


async def test_no_wait_names_the_holding_process(tmp_path, holder):
    with pytest.raises(WorkdirBusyError) as info:
        await enter(SQLiteStorage(tmp_path), wait=False)
    message = str(info.value)
    assert f"process {holder.pid} (python -c {tmp_path})" in message
    assert str(tmp_path) in message and "--no-wait" in message


async def test_wait_lasts_until_the_holder_exits(tmp_path, holder):
    told: list[str] = []
    waiter = asyncio.create_task(enter(SQLiteStorage(tmp_path), on_wait=told.append))
    await asyncio.sleep(0.5)
    assert not waiter.done()
    assert len(told) == 1 and f"process {holder.pid}" in told[0]
    await finish(holder)
    assert await asyncio.wait_for(waiter, 10) is True
    assert len(told) == 1  # told once, however long it waited


async def test_a_sigkilled_holder_frees_the_lock(tmp_path, holder):
    os.kill(holder.pid, signal.SIGKILL)
    await holder.wait()
    assert await asyncio.wait_for(enter(SQLiteStorage(tmp_path), wait=False), 5) is True


async def test_another_process_waits_for_this_one(tmp_path):
    storage = SQLiteStorage(tmp_path)
    async with storage.writer():
        proc = await spawn(_HOLDER, str(tmp_path))
        assert await asyncio.wait_for(proc.wait(), 30) != 0
        assert f"process {os.getpid()}" in (await proc.stderr.read()).decode()


async def test_lock_file_names_the_holder_while_held(tmp_path):
    first, second = SQLiteStorage(tmp_path), SQLiteStorage(tmp_path)
    async with first.writer():
        info = json.loads((tmp_path / LOCK_FILENAME).read_text())
        assert info["pid"] == os.getpid() and info["label"]
        with pytest.raises(WorkdirBusyError):  # a second storage is a second writer
            await enter(second, wait=False)
    assert (tmp_path / LOCK_FILENAME).read_text() == ""
    assert await enter(second, wait=False) is True


def test_label_is_the_command_line(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["/venv/bin/kgrag", "index", "docs/"])
    assert command_label() == "kgrag index docs/"
    monkeypatch.setattr(sys, "argv", ["kgrag", "index", *["x" * 50] * 5])
    assert len(command_label()) == 120 and command_label().endswith("…")


async def test_memory_storage_takes_no_file_lock(tmp_path, holder):
    assert await enter(memory_storage(tmp_path), wait=False) is True


# -- readers follow other connections' commits ----------------------------------


@pytest.fixture
async def reader(tmp_path):
    storage = SQLiteStorage(tmp_path)
    await storage.open()
    await storage.vectors("v").upsert(["a", "b"], np.array([[1.0, 0.0], [0.7, 0.7]]), [{}, {}])
    assert [h.id for h in await storage.vectors("v").query(np.array([0.0, 1.0]), 5)] == ["b", "a"]
    yield storage
    await storage.close()


async def test_commits_of_another_connection_are_seen(tmp_path, reader):
    other = SQLiteStorage(tmp_path)
    async with other:
        await other.vectors("v").upsert(["c"], np.array([[0.0, 1.0]]), [{"n": 3}])
        await other.vectors("v").delete(["a"])
        await other.vectors("w").upsert(["x"], np.ones((1, 3)), [{}])  # a new namespace
    hits = await reader.vectors("v").query(np.array([0.0, 1.0]), 5)
    assert [h.id for h in hits] == ["c", "b"] and hits[0].meta == {"n": 3}
    assert await reader.vectors("v").count() == 2
    assert [h.id for h in await reader.vectors("w").query(np.ones(3), 5)] == ["x"]
    assert reader._db.refreshes == 1


async def test_commits_of_another_process_are_seen(tmp_path, reader):
    proc = await spawn(_WRITER, str(tmp_path))
    assert await asyncio.wait_for(proc.wait(), 30) == 0, (await proc.stderr.read()).decode()
    hits = await reader.vectors("v").query(np.array([0.0, 1.0]), 5)
    assert [h.id for h in hits] == ["new", "a"] and hits[0].meta == {"by": "child"}


async def test_own_commits_never_reload(tmp_path, reader):
    vs = reader.vectors("v")
    index = vs._index
    assert index is not None
    other = SQLiteStorage(tmp_path)  # a reader alongside changes nothing either
    async with other:
        assert await other.vectors("v").count() == 2
        for n in range(30):  # enough pages for WAL auto-checkpoints
            async with reader.transaction():
                await reader.kv("big").upsert(
                    {f"{n}.{i}": {"x": os.urandom(3000).hex()} for i in range(100)}
                )
                await vs.upsert([f"n{n}"], np.array([[1.0, n]]), [{}])
            await vs.query(np.array([1.0, 0.0]), 3)
            await other.kv("big").count()
    assert (tmp_path / f"{DB_FILENAME}-wal").stat().st_size < 20 * 2**20  # it did checkpoint
    assert reader._db.refreshes == 0 and vs._index is index and len(index) == 32


def test_data_version_changes_only_for_other_connections(tmp_path):
    """The SQLite behaviour the refresh relies on."""
    path = tmp_path / "t.db"
    own, other = (sqlite3.connect(path, isolation_level=None) for _ in range(2))
    own.execute("PRAGMA journal_mode=WAL").fetchone()
    own.execute("CREATE TABLE t(x)")
    version = own.execute("PRAGMA data_version").fetchone()[0]
    for _ in range(5):
        own.execute("INSERT INTO t VALUES (1)")
    assert own.execute("PRAGMA data_version").fetchone()[0] == version
    other.execute("INSERT INTO t VALUES (2)")
    assert own.execute("PRAGMA data_version").fetchone()[0] != version
    own.close()
    other.close()


async def test_readers_never_see_part_of_a_commit(tmp_path):
    proc = await spawn(_BATCHES, str(tmp_path), "200")
    await expect_line(proc, "writing")
    done = asyncio.create_task(proc.wait())
    async with SQLiteStorage(tmp_path) as storage:
        seen: set[int] = set()
        while not done.done() or not seen:  # one last look after it finished
            hits = await storage.vectors("v").query(np.ones(8), 1000)
            gens = {h.meta["gen"] for h in hits}
            assert len(hits) in (0, BATCH) and len(gens) <= 1, (len(hits), gens)
            assert await storage.kv("docs").count() % BATCH == 0
            seen |= gens
            await asyncio.sleep(0)
        assert await done == 0, (await proc.stderr.read()).decode()
        assert len(seen) > 1 and storage._db.refreshes > 1


async def test_a_read_sees_one_snapshot(tmp_path, reader):
    """Every statement of one read sees the state its first statement saw."""
    other = sqlite3.connect(tmp_path / DB_FILENAME, isolation_level=None, check_same_thread=False)

    def two_counts(conn: sqlite3.Connection) -> tuple[int, int]:
        before = conn.execute("SELECT COUNT(*) FROM meta").fetchone()[0]
        other.execute("INSERT INTO meta(key, value) VALUES ('sneaked', '1')")  # commits
        return before, conn.execute("SELECT COUNT(*) FROM meta").fetchone()[0]

    before, after = await reader._db.read(two_counts)
    other.close()
    assert before == after
    assert await reader.get_meta("sneaked") == 1 and reader._db.refreshes == 1
