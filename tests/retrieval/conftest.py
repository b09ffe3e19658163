"""Fixtures: the hand-written corpora in a real in-memory SQLite store."""

from __future__ import annotations

import pytest

from kgrag.llm.embedding import EmbeddingService
from kgrag.llm.fake import FakeEmbeddingProvider
from kgrag.llm.ledger import Ledger
from kgrag.retrieval import QueryEngine
from kgrag.storage.sqlite import memory_storage
from tests.retrieval.corpus import build_corpus, make_parts
from tests.retrieval.ppr_corpus import write_corpus


@pytest.fixture
async def parts(tmp_path):
    storage = memory_storage(tmp_path)
    await storage.open()
    p = make_parts(storage)
    await build_corpus(storage, p.embed)
    yield p
    await storage.close()


@pytest.fixture
async def ppr_engine(tmp_path):
    """A query engine (no chat model) over the ppr corpus (:mod:`query.ppr_corpus`)."""
    storage = memory_storage(tmp_path)
    await storage.open()
    embed = EmbeddingService(FakeEmbeddingProvider(dim=256), ledger=Ledger())
    await write_corpus(storage, embed)
    yield QueryEngine(storage, None, embed)
    await storage.close()
