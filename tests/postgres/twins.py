"""One corpus indexed twice, into the embedded store and into a PostgreSQL workspace.

The feature tests drive both indexes through the same calls and compare
what comes out: the canonical export byte for byte, query contexts and
traces, check reports. Settings are :func:`lifecycle_settings` (the
built-in fake models, one chunk per paragraph) on both sides; only the
storage differs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgrag.api.facade import KGRag
from kgrag.config.settings import Settings
from tests.indexing.lifecycle_corpus import document, lifecycle_settings, write
from tests.support.postgres import fresh_workspace

BACKENDS = ("sqlite", "postgres")
QUESTION = "What did Alice Moreau and Bruno Keller do in Lyon for Zephyr Robotics?"

Act = Callable[[KGRag], Awaitable[Any]]


@dataclass(frozen=True)
class Corpus:
    """Six overlapping documents: three tagged ``team=red``, three ``team=blue``."""

    folder: Path
    red: list[Path]
    blue: list[Path]

    @property
    def paths(self) -> list[Path]:
        return [*self.red, *self.blue]


def write_corpus(folder: Path) -> Corpus:
    paths = [write(folder, f"d{i}.txt", document([i, i + 1, i + 2])) for i in range(6)]
    return Corpus(folder, paths[:3], paths[3:])


def pg_settings(workdir: Path, dsn: str, workspace: str, **extra: Any) -> Settings:
    return lifecycle_settings(
        workdir, storage="postgres", postgres_dsn=dsn, postgres_workspace=workspace, **extra
    )


async def drop_workspace(dsn: str, workspace: str) -> None:
    from kgrag.storage.postgres import PostgresStorage

    storage = PostgresStorage(Path("."), dsn=dsn, workspace=workspace)
    await storage.open()
    await storage.drop()


@asynccontextmanager
async def twins(root: Path, dsn: str) -> AsyncIterator[dict[str, KGRag]]:
    """Both indexes, open (backend name -> index); the workspace is dropped afterwards."""
    workspace = fresh_workspace("f")
    settings = {
        "sqlite": lifecycle_settings(root / "sqlite"),
        "postgres": pg_settings(root / "postgres", dsn, workspace),
    }
    try:
        async with AsyncExitStack() as stack:
            yield {b: await stack.enter_async_context(KGRag(settings[b])) for b in BACKENDS}
    finally:
        await drop_workspace(dsn, workspace)


async def both(rags: dict[str, KGRag], act: Act) -> dict[str, Any]:
    """``act`` on each index in turn (never at once: the answers must not race)."""
    return {b: await act(rags[b]) for b in BACKENDS}


def run(coro: Awaitable[Any]) -> Any:
    """A module fixture's asynchronous work, on a loop of its own."""

    async def main() -> Any:
        return await coro

    return asyncio.run(main())
