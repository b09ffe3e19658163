"""The writer lease: one writer per working directory.

:class:`WriterLease` is what a backend's ``Storage.writer()`` returns. It
has two layers:

- **within a process**, an :class:`asyncio.Lock` serialises the tasks that
  ask for the lease. The holder is tracked with a context variable (as
  :mod:`kgrag.storage.sqlite.db` tracks transactions), so the holding task
  and the tasks it starts inside the block (``asyncio.gather``) re-enter
  the lease instead of deadlocking on it;
- **across processes**, an OS file lock: ``fcntl.flock(LOCK_EX | LOCK_NB)``
  on ``<workdir>/kgrag.lock``, polled with :func:`asyncio.sleep` so the
  event loop never blocks (and a waiter can be cancelled). The holder
  writes its pid and a short label (its command line) into the file, so a
  waiter can say who it waits for; the file is emptied on release but
  never deleted (deleting a lock file races with the next locker).

An flock belongs to the open file, so the kernel releases it when the
holder dies however it dies (``kill -9`` included): there are no stale
locks to clean up. (A child forked without ``exec`` while the lease is
held shares the lock until it exits.) Two storage objects on the same
workdir in one process are two writers too: the second waits for the
first like another process would.

Where :mod:`fcntl` does not exist (Windows) only the in-process layer is
enforced.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from kgrag.errors import StorageError, WorkdirBusyError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_FILENAME = "kgrag.lock"
POLL_S = 0.05  # first wait between tries; it grows to MAX_POLL_S
MAX_POLL_S = 0.5
_LABEL_CHARS = 120

OnWait = Callable[[str], None] | None

# Tokens of the leases the current context (task) holds.
_HOLDING: contextvars.ContextVar[tuple[object, ...]] = contextvars.ContextVar(
    "kgrag_writer_holding", default=()
)


def command_label() -> str:
    """This process's command line, shortened (``kgrag index docs/``)."""
    program = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if program in ("", "-c", "-m"):
        program = f"python {program}".strip()
    label = " ".join([program, *sys.argv[1:]])
    return label if len(label) <= _LABEL_CHARS else label[: _LABEL_CHARS - 1] + "…"


class WriterLease:
    """The exclusive writer lease of one workdir (see the module docstring).

    ``lock_path`` ``None`` keeps only the in-process layer (in-memory
    storage, where no other process can reach the data).
    """

    def __init__(self, lock_path: Path | None, *, label: str | None = None):
        self.lock_path = lock_path
        self.label = label if label is not None else command_label()
        self._token: object | None = None
        self._lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None

    def held(self) -> bool:
        """Whether the current task (or one that started it) holds the lease."""
        return self._token is not None and self._token in _HOLDING.get()

    @asynccontextmanager
    async def hold(self, *, wait: bool = True, on_wait: OnWait = None) -> AsyncIterator[None]:
        """Hold the lease for the block; see ``Storage.writer``."""
        if self.held():
            yield  # re-entered by the holder or a task it started
            return
        async with self._loop_lock():
            fd = await self._acquire_file(wait, on_wait)
            token = object()
            self._token = token
            marker = _HOLDING.set((*_HOLDING.get(), token))
            try:
                yield
            finally:
                self._token = None
                try:
                    if fd is not None:
                        _release(fd)
                finally:
                    _HOLDING.reset(marker)

    def _loop_lock(self) -> asyncio.Lock:
        """The in-process lock, made for the running event loop."""
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:
            self._lock, self._lock_loop = asyncio.Lock(), loop
        return self._lock

    # -- the file lock -----------------------------------------------------------

    async def _acquire_file(self, wait: bool, on_wait: OnWait) -> int | None:
        """Lock the lock file (polling) and write this holder into it."""
        if self.lock_path is None or fcntl is None:
            return None
        fd = self._open()
        try:
            delay, told = POLL_S, False
            while not _try_lock(fd, self.lock_path):
                busy = self._busy_message(fd)
                if not wait:
                    raise WorkdirBusyError(f"{busy}; wait for it or run again without --no-wait")
                if not told and on_wait is not None:
                    on_wait(f"{busy}; waiting until it finishes")
                    told = True
                await asyncio.sleep(delay)
                delay = min(delay * 1.5, MAX_POLL_S)
            _write_holder(fd, self.lock_path, self.label)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _open(self) -> int:
        assert self.lock_path is not None
        try:
            self.lock_path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StorageError(f"cannot open the lock file {self.lock_path}: {exc}") from exc

    def _busy_message(self, fd: int) -> str:
        assert self.lock_path is not None
        pid, label = read_holder(fd)
        who = f"process {pid}" if pid is not None else "another process"
        if label:
            who += f" ({label})"
        return f"{self.lock_path.parent} is being written by {who}"


def _try_lock(fd: int, path: Path) -> bool:
    """Take the exclusive lock without blocking; ``False`` if someone holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:
        raise StorageError(f"cannot lock {path}: {exc}") from exc
    return True


def _write_holder(fd: int, path: Path, label: str) -> None:
    data = json.dumps({"pid": os.getpid(), "label": label}).encode() + b"\n"
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
    except OSError as exc:  # the caller closes fd, which unlocks it
        raise StorageError(f"cannot write the lock file {path}: {exc}") from exc


def read_holder(fd: int) -> tuple[int | None, str]:
    """(pid, label) written in the lock file, ``(None, "")`` when unreadable."""
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"null")
        return int(info["pid"]), str(info.get("label", ""))
    except (OSError, ValueError, TypeError, KeyError):
        return None, ""  # empty (not written yet / released) or foreign


def _release(fd: int) -> None:
    """Empty the lock file, unlock it and close it (best effort)."""
    try:
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
    except OSError:
        pass  # closing the descriptor releases the lock all the same
    finally:
        os.close(fd)
