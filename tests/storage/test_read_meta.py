"""Meta values read through kgrag.storage.layout.typed.read_meta: the shape the reader
expects, or StoreCorruptError naming the key."""

from __future__ import annotations

import pytest

from kgrag.errors import StoreCorruptError
from kgrag.storage.layout import EXTRACTORS_META, GRAPH_VERSION_META, LEDGER_META, REJECTED_META
from kgrag.storage.layout.rows import Costs
from kgrag.storage.layout.typed import read_meta
from kgrag.storage.sqlite.storage import memory_storage


async def test_values_of_the_expected_shape_come_back_as_stored(tmp_path):
    storage = memory_storage(tmp_path)
    await storage.open()
    try:
        assert await read_meta(storage, GRAPH_VERSION_META, int) is None
        ledger = {"llm": {"calls": 2, "seconds": 1.5}, "embed": {}}
        await storage.set_meta(GRAPH_VERSION_META, 7)
        await storage.set_meta(EXTRACTORS_META, ["llm", "nlp"])
        await storage.set_meta(LEDGER_META, ledger)
        await storage.set_meta(REJECTED_META, {"a.txt": "empty"})
        assert await read_meta(storage, GRAPH_VERSION_META, int) == 7
        assert await read_meta(storage, EXTRACTORS_META, list[str]) == ["llm", "nlp"]
        assert await read_meta(storage, LEDGER_META, Costs) == ledger  # int counts are floats too
        assert await read_meta(storage, REJECTED_META, dict[str, str]) == {"a.txt": "empty"}
        assert await read_meta(storage, REJECTED_META, object) == {"a.txt": "empty"}
    finally:
        await storage.close()


@pytest.mark.parametrize(
    ("value", "shape"),
    [
        ("7", int),
        (["llm", 3], list[str]),
        ("llm", list[str]),
        ({"llm": {"calls": "two"}}, Costs),
        ({"llm": 2}, Costs),
        ([["a.txt", "empty"]], dict[str, str]),
    ],
)
async def test_another_shape_is_a_corrupt_store(tmp_path, value, shape):
    storage = memory_storage(tmp_path)
    await storage.open()
    try:
        await storage.set_meta("some_key", value)
        with pytest.raises(StoreCorruptError, match="some_key"):
            await read_meta(storage, "some_key", shape)
    finally:
        await storage.close()
