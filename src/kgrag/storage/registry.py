"""Registry of storage backends, imported lazily by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgrag.registry import Registry

STORAGES: Registry[Any] = Registry("storage backend")
STORAGES.register("sqlite", "kgrag.storage.sqlite:SQLiteStorage")
STORAGES.register("memory", "kgrag.storage.sqlite:memory_storage")


def open_storage(name: str, workdir: Path, **options: Any):
    """Build (not yet open) the storage backend ``name`` for ``workdir``."""
    factory = STORAGES.get(name)
    return factory(workdir, **options)
