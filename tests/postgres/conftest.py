"""Fixtures of the PostgreSQL tests: one server per test session, a workspace per test."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.support.postgres import fresh_workspace, server

pytest.importorskip("psycopg", reason="the postgres extra is not installed")


@pytest.fixture(scope="session")
def pg_dsn():
    # a short folder: the server's Unix socket path must stay under 108 bytes
    with tempfile.TemporaryDirectory(prefix="kgpg") as folder, server(Path(folder)) as dsn:
        yield dsn


@pytest.fixture
async def pg_storage(pg_dsn, tmp_path):
    from kgrag.storage.postgres import PostgresStorage

    storage = PostgresStorage(tmp_path, dsn=pg_dsn, workspace=fresh_workspace())
    await storage.open()
    yield storage
    await storage.drop()
