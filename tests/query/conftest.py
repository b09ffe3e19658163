"""Fixtures: the hand-written corpus in a real in-memory SQLite store."""

from __future__ import annotations

import pytest

from kgrag.storage.sqlite import memory_storage
from query.corpus import build_corpus, make_parts


@pytest.fixture
async def parts(tmp_path):
    storage = memory_storage(tmp_path)
    await storage.open()
    p = make_parts(storage)
    await build_corpus(storage, p.embed)
    yield p
    await storage.close()
