"""Registry of storage backends, imported lazily by name."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgrag.registry import Registry

if TYPE_CHECKING:
    from kgrag.config import Settings

STORAGES: Registry[Any] = Registry("storage backend")
STORAGES.register("sqlite", "kgrag.storage.sqlite:SQLiteStorage")
STORAGES.register("memory", "kgrag.storage.sqlite:memory_storage")
STORAGES.register("postgres", "kgrag.storage.postgres:PostgresStorage")


def open_storage(name: str, workdir: Path, **options: Any):
    """Build (not yet open) the storage backend ``name`` for ``workdir``."""
    factory = STORAGES.get(name)
    return factory(workdir, **options)


def storage_for(settings: Settings, workdir: Path | None = None):
    """The (not yet opened) backend ``settings`` select, with its options."""
    options: dict[str, Any] = {}
    if settings.storage == "postgres":
        options = {"dsn": settings.postgres_dsn, "workspace": settings.postgres_workspace}
    return open_storage(settings.storage, Path(workdir or settings.workdir), **options)
