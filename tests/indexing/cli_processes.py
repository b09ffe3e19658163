"""Driving ``python -m kgrag.cli.main`` as real processes, with the built-in fake models.

The environment mirrors :func:`lifecycle_settings` (fake chat and
embeddings, one chunk per paragraph), so these tests need nothing outside
the repository. Commands run in a test's own folder so that no ``.env``
file of the caller's is read.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

FAKE_ENV = {
    "KGRAG_LLM_PROVIDER": "fake",
    "KGRAG_EMBEDDING_PROVIDER": "fake",
    "KGRAG_EXTRACTOR": "llm",
    "KGRAG_SPLIT_BY_CHARACTER": "\n\n",
    "KGRAG_SPLIT_BY_CHARACTER_ONLY": "true",
    "KGRAG_FORCE_LLM_SUMMARY_ON_MERGE": "3",
    "KGRAG_MAX_GLEANING": "0",
}


def cli_env(**extra: str) -> dict[str, str]:
    """This process's environment without KGRAG_/OPENAI_ variables, plus the fake settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGRAG_", "OPENAI_"))}
    env.update(FAKE_ENV)
    env.update(extra)
    return env


def command(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "kgrag.cli.main", *map(str, args)]


def kgrag(
    *args: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """Run one command to its end (text output captured)."""
    return subprocess.run(
        command(*args),
        cwd=cwd,
        env=env or cli_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def ok(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run one command that must succeed; its stdout."""
    out = kgrag(*args, cwd=cwd, env=env)
    assert out.returncode == 0, f"kgrag {args[0]} exited {out.returncode}:\n{out.stderr[-4000:]}"
    return out.stdout


def export(workdir: Path, cwd: Path, env: dict[str, str] | None = None) -> bytes:
    """The index's canonical export without timestamps."""
    target = cwd / f"export-{workdir.name}.json"
    ok("export", "--workdir", workdir, "--no-timestamps", "--output", target, cwd=cwd, env=env)
    return target.read_bytes()


def docs_json(workdir: Path, cwd: Path, env: dict[str, str] | None = None) -> list[dict]:
    return json.loads(
        ok("docs", "--json", "--limit", "1000", "--workdir", workdir, cwd=cwd, env=env)
    )["documents"]


class Lines:
    """A process's stderr (or stdout), read line by line on a thread."""

    def __init__(self, stream):
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            with self._cond:
                self.lines.append(line)
                self._cond.notify_all()
        with self._cond:
            self.lines.append("")  # end of stream
            self._cond.notify_all()

    def wait_for(self, text: str, timeout: float) -> str | None:
        """The first line containing ``text``, or ``None`` at the end of the stream or timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                hit = next((line for line in self.lines if text in line), None)
                if hit is not None or (self.lines and self.lines[-1] == ""):
                    return hit
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)

    def text(self) -> str:
        self._thread.join(timeout=30)
        return "".join(self.lines)


def lock_holder(workdir: Path) -> int | None:
    """The pid written in ``<workdir>/kgrag.lock`` (the writer lease's holder), if any."""
    try:
        return int(json.loads((workdir / "kgrag.lock").read_text() or "null")["pid"])
    except (OSError, ValueError, TypeError, KeyError):
        return None


def wait_for_lease(
    workdir: Path, procs: list[subprocess.Popen], timeout: float = 60, poll: float = 0.002
) -> subprocess.Popen | None:
    """The process of ``procs`` that first holds the writer lease; ``None`` if all exited first."""
    by_pid = {p.pid: p for p in procs}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        holder = by_pid.get(lock_holder(workdir))
        if holder is not None:
            return holder
        if all(p.poll() is not None for p in procs):
            return None
        time.sleep(poll)
    raise AssertionError(f"no process took the writer lease of {workdir} in {timeout} s")


def _stopped(pid: int) -> bool:
    """Whether every thread of ``pid`` is stopped (Linux /proc)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        states = [
            Path(f"/proc/{pid}/task/{t}/stat").read_text().rsplit(")", 1)[1].split()[0]
            for t in tasks
        ]
    except (OSError, IndexError):
        return False
    return all(s in "tT" for s in states)


def _writable(db: Path) -> bool:
    """Whether nobody holds a write transaction on ``db`` right now."""
    conn = sqlite3.connect(db, timeout=0, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()


def freeze(proc: subprocess.Popen, workdir: Path, tries: int = 500) -> bool:
    """SIGSTOP ``proc`` at a moment it holds no SQLite write transaction.

    A process frozen inside a transaction would block every other writer
    of the database (SQLite's busy timeout, then "database is locked"),
    which is not what a test of the writer lease wants to see. Returns
    ``False`` if ``proc`` exited first.
    """
    db = workdir / "kgrag.db"
    for _ in range(tries):
        if proc.poll() is not None:
            return False
        os.kill(proc.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 5
        while not _stopped(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.001)
        if _writable(db):
            return True
        os.kill(proc.pid, signal.SIGCONT)
        time.sleep(0.003)
    raise AssertionError(f"could not freeze {proc.pid} outside a transaction")


def thaw(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGCONT)
