"""Workspaces: isolated indexes served by one process, opened on first use.

The default workspace is the server's folder itself (``--workdir``), so a
folder indexed with ``kgrag index`` is served as it is; a named workspace
``NAME`` keeps its files (uploads) in ``<workdir>/workspaces/NAME``. On the
embedded store its index is there too; on PostgreSQL it is a PostgreSQL
workspace of its own (:mod:`kgrag.server.workspaces.postgres`), so every server
process on the database serves the same workspaces. Names are short ASCII
words (letters, digits, ``-`` and ``_``): a name can never reach outside
the folder.

Each request's instance is checked against the index's record first
(:func:`kgrag.server.workspaces.following.behind`, one meta read): when a run in any
process settled settings the instance lacks, a fresh instance serves from
then on and the old one is closed with the server (requests may still use
it).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path

from kgrag.api.facade import KGRag
from kgrag.config.settings import Settings
from kgrag.errors import KGRagError
from kgrag.server.workspaces import postgres as pg
from kgrag.server.workspaces.following import behind

DEFAULT = "default"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class WorkspaceError(KGRagError):
    """A workspace name that is not allowed, or a workspace that does not exist."""


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise WorkspaceError(f"invalid workspace name {name!r}: letters, digits, - and _ only")
    return name


@dataclass(slots=True)
class Workspaces:
    """One :class:`KGRag` per workspace, opened lazily and closed with the server."""

    settings: Settings
    create: bool = True  # named workspaces are created on first use
    _open: dict[str, KGRag] = field(default_factory=dict)
    _retired: list[KGRag] = field(default_factory=list)  # replaced while requests may use them
    _bases: dict[str, Settings] = field(default_factory=dict)  # settings_for, by name
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def folder(self, name: str) -> Path:
        if name == DEFAULT:
            return Path(self.settings.store.workdir)
        return Path(self.settings.store.workdir) / "workspaces" / check_name(name)

    def settings_for(self, name: str) -> Settings:
        """The settings that open workspace ``name`` (made once per name)."""
        if name not in self._bases:
            self._bases[name] = self._settings_for(name)
        return self._bases[name]

    def _settings_for(self, name: str) -> Settings:
        folder = self.folder(name)
        if name == DEFAULT or not pg.on_postgres(self.settings):
            return self.settings.with_overrides(workdir=folder)
        workspace = pg.workspace_of(pg.base_workspace(self.settings), name)
        if len(workspace) > pg.MAX_WORKSPACE:
            raise WorkspaceError(
                f"workspace name {name!r} is too long for PostgreSQL workspace {workspace!r} "
                f"(at most {pg.MAX_WORKSPACE} characters)"
            )
        return self.settings.with_overrides(workdir=folder, postgres_workspace=workspace)

    async def names(self) -> list[str]:
        """The default workspace and every named one: folders here, and schemas on PostgreSQL."""
        root = Path(self.settings.store.workdir) / "workspaces"
        named = {p.name for p in root.iterdir() if p.is_dir()} if root.is_dir() else set()
        if pg.on_postgres(self.settings):
            rag = await self.get(DEFAULT)
            named |= set(await pg.stored_names(rag.storage, pg.base_workspace(self.settings)))
        return [DEFAULT, *(n for n in sorted(named) if _NAME.match(n) and n != DEFAULT)]

    async def exists(self, name: str) -> bool:
        if name == DEFAULT or self.folder(name).exists():
            return True
        return pg.on_postgres(self.settings) and name in await self.names()

    async def get(self, name: str) -> KGRag:
        """The open index of workspace ``name`` (created when allowed), as recorded now."""
        check_name(name)
        rag = self._open.get(name)
        if rag is not None and not await behind(rag, self.settings_for(name)):
            return rag
        if rag is None and not self.create and not await self.exists(name):
            raise WorkspaceError(f"no workspace {name!r}")
        async with self._lock:
            current = self._open.get(name)
            if current is not None and current is not rag:
                return current  # another request opened it meanwhile
            fresh = KGRag(self.settings_for(name))
            await fresh.open(create=True)
            if rag is not None:
                self._retired.append(rag)
            self._open[name] = fresh
            return fresh

    async def close(self) -> None:
        async with self._lock:
            for rag in [*self._open.values(), *self._retired]:
                await rag.close()
            self._open.clear()
            self._retired.clear()
