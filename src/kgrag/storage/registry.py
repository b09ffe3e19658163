"""Registry of storage backends, imported lazily by name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kgrag.config.registry import Registry
from kgrag.storage.base import Storage

if TYPE_CHECKING:
    from kgrag.config.settings import Settings
    from kgrag.storage.postgres import PostgresStorage
    from kgrag.storage.postgres.storage import PostgresOptions
    from kgrag.storage.sqlite import SQLiteStorage, memory_storage

StorageFactory = Callable[..., Storage]
"""What a backend registers: ``factory(workdir, **options)`` builds a (closed) store."""

STORAGES: Registry[StorageFactory] = Registry("storage backend")
STORAGES.register("sqlite", "kgrag.storage.sqlite:SQLiteStorage")
STORAGES.register("memory", "kgrag.storage.sqlite:memory_storage")
STORAGES.register("postgres", "kgrag.storage.postgres:PostgresStorage")


if TYPE_CHECKING:  # the type checker holds each shipped backend to the Storage protocol
    _SHIPPED: tuple[StorageFactory, ...] = (SQLiteStorage, memory_storage, PostgresStorage)


def open_storage(name: str, workdir: Path, **options: object) -> Storage:
    """Build (not yet open) the storage backend ``name`` for ``workdir``."""
    factory: StorageFactory = STORAGES.get(name)
    return factory(workdir, **options)


def storage_for(settings: Settings, workdir: Path | None = None) -> Storage:
    """The (not yet opened) backend ``settings`` select, with its options."""
    options: PostgresOptions | dict[str, object] = {}
    if settings.store.backend == "postgres":
        options = postgres_options(settings)
    return open_storage(settings.store.backend, Path(workdir or settings.store.workdir), **options)


def postgres_options(settings: Settings) -> PostgresOptions:
    """The postgres storage's options from ``settings`` (see docs/postgres.md)."""
    ssl = {
        "sslmode": settings.postgres.sslmode,
        "sslrootcert": settings.postgres.sslrootcert,
        "sslcert": settings.postgres.sslcert,
        "sslkey": settings.postgres.sslkey,
    }
    return {
        "dsn": settings.postgres.dsn,
        "workspace": settings.postgres.workspace,
        "pool_min": settings.postgres.pool_min,
        "pool_max": settings.postgres.pool_max,
        "reconnect_s": settings.postgres.reconnect_s,
        "conninfo": {k: v for k, v in ssl.items() if v},
        "index_rows": settings.postgres.index_rows,
        "hnsw_m": settings.postgres.hnsw_m,
        "hnsw_ef_construction": settings.postgres.hnsw_ef_construction,
        "hnsw_ef_search": settings.postgres.hnsw_ef_search,
    }
