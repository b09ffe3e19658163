"""Declared capabilities: what the embedded store refuses, by name, through the real callers."""

from __future__ import annotations

import pytest

from kgrag import ConfigError, KGRag
from kgrag.errors import MissingCapabilityError
from kgrag.storage import Capability, feature, supports
from kgrag.storage.sqlite import SQLiteStorage, memory_storage
from tests.support.settings import fake_settings

WORKER_REFUSAL = (
    "the sqlite storage has no work queue; workers need storage = postgres "
    "(the embedded store has one writer: use kgrag index)"
)


async def test_a_worker_on_the_embedded_store_is_refused_with_the_old_message(tmp_path):
    async with KGRag(fake_settings(tmp_path / "idx")) as rag:
        with pytest.raises(MissingCapabilityError) as caught:
            await rag.work()
    assert str(caught.value) == WORKER_REFUSAL  # the text kgrag worker printed before
    assert isinstance(caught.value, ConfigError)  # so the CLI still exits with its usage code
    assert (caught.value.backend, caught.value.capability) == ("sqlite", "work_queue")


@pytest.mark.parametrize("capability", list(Capability))
def test_the_embedded_stores_declare_nothing_optional(tmp_path, capability):
    for storage in (SQLiteStorage(tmp_path / "f"), memory_storage(tmp_path / "m")):
        assert not supports(storage, capability)
        with pytest.raises(MissingCapabilityError, match=f"the {storage.name} storage has no "):
            feature(storage, capability)


async def test_labels_name_the_file_or_the_memory_store(tmp_path):
    assert SQLiteStorage(tmp_path).label == f"sqlite {(tmp_path / 'kgrag.db').resolve()}"
    assert memory_storage(tmp_path).label == f"memory {tmp_path.resolve()}"
    assert await SQLiteStorage(tmp_path / "none").exists() is False


def _store_members() -> set[str]:
    """Every member name of Storage and of the capability protocols (and the old probe names)."""
    from kgrag.storage import base, capabilities

    names = {n for p in (base.Storage, *capabilities.PROTOCOLS.values()) for n in dir(p)}
    return {n for n in names if not n.startswith("_")} | {"path", "db", "workdir"}


def test_no_module_probes_a_store_member_by_name():
    import ast
    from pathlib import Path

    import kgrag

    members, found = _store_members(), []
    for path in Path(kgrag.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id not in {"getattr", "hasattr"} or len(node.args) < 2:
                continue
            name = node.args[1]
            target = ast.unparse(node.args[0])
            store = "storage" in target or target in {"target", "source"}  # migrate's two stores
            if isinstance(name, ast.Constant) and name.value in members and store:
                found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    assert found == []  # ask supports()/feature(), or use the Storage member itself
