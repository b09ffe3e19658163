"""Conformance of the key-value stores and the storage's meta values."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kgrag.storage.base import Storage
from kgrag.storage.testing.common import JSON, PROPERTY, StorageFixture, fresh


class KVStoreConformance(StorageFixture):
    async def test_kv_roundtrip(self, storage: Storage) -> None:
        kv = storage.kv("docs")
        await kv.upsert({"b": {"n": 2}, "a": {"text": "héllo 世界"}})
        assert await kv.get("a") == {"text": "héllo 世界"}
        assert await kv.get("zz") is None
        assert await kv.get_many(["b", "zz", "a"]) == [{"n": 2}, None, {"text": "héllo 世界"}]
        assert await kv.keys() == ["a", "b"]
        assert await kv.count() == 2

    async def test_kv_upsert_replaces_and_delete_removes(self, storage: Storage) -> None:
        kv = storage.kv("docs")
        await kv.upsert({"a": {"x": 1, "y": 2}})
        await kv.upsert({"a": {"x": 3}})
        assert await kv.get("a") == {"x": 3}
        await kv.delete(["a", "never"])
        assert await kv.get("a") is None and await kv.count() == 0

    async def test_kv_missing(self, storage: Storage) -> None:
        kv = storage.kv("docs")
        await kv.upsert({"a": {}, "b": {}})
        assert await kv.missing(["a", "c", "d", "c"]) == {"c", "d"}
        assert await kv.missing([]) == set()

    async def test_kv_namespaces_are_separate(self, storage: Storage) -> None:
        await storage.kv("one").upsert({"k": {"v": 1}})
        assert await storage.kv("two").get("k") is None
        assert await storage.kv("two").count() == 0

    async def test_kv_large_value(self, storage: Storage) -> None:
        text = "Marley was dead: to begin with. 马利死了。" * 3000
        await storage.kv("docs").upsert({"big": {"content": text}})
        assert await storage.kv("docs").get("big") == {"content": text}

    @PROPERTY
    @given(
        items=st.dictionaries(st.text(max_size=20), st.dictionaries(st.text(), JSON), max_size=8)
    )
    async def test_kv_roundtrips_arbitrary_json(
        self, storage: Storage, items: dict[str, dict[str, object]]
    ) -> None:
        kv = storage.kv(fresh("kv"))
        await kv.upsert(items)
        assert await kv.get_many(list(items)) == list(items.values())
        assert await kv.keys() == sorted(items)


class MetaConformance(StorageFixture):
    async def test_meta_roundtrip(self, storage: Storage) -> None:
        assert await storage.get_meta("embedding") is None
        await storage.set_meta("embedding", {"model": "m", "dim": 384})
        await storage.set_meta("schema", 3)
        assert await storage.get_meta("embedding") == {"model": "m", "dim": 384}
        await storage.set_meta("schema", 4)
        assert await storage.get_meta("schema") == 4
