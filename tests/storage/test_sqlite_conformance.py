"""The shared storage conformance suite, run against both SQLite variants."""

import pytest

from kgrag.storage.sqlite import SQLiteStorage, memory_storage
from kgrag.storage.testing import StorageConformance


class TestSQLiteFile(StorageConformance):
    @pytest.fixture
    async def storage(self, tmp_path):
        storage = SQLiteStorage(tmp_path / "work")
        await storage.open()
        yield storage
        await storage.close()


class TestSQLiteMemory(StorageConformance):
    @pytest.fixture
    async def storage(self, tmp_path):
        storage = memory_storage(tmp_path)
        await storage.open()
        yield storage
        await storage.close()
