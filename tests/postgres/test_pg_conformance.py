"""The storage conformance suite on a real PostgreSQL with pgvector."""

from __future__ import annotations

import pytest

from kgrag.storage.testing import StorageConformance


class TestPostgres(StorageConformance):
    writes_wait_for_transactions = False  # concurrent transactions, each on its connection

    @pytest.fixture
    async def storage(self, pg_storage):
        yield pg_storage
