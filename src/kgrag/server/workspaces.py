"""Workspaces: isolated indexes served by one process, opened on first use.

The default workspace is the server's folder itself (``--workdir``), so a
folder indexed with ``kgrag index`` is served as it is; a named workspace
``NAME`` lives in ``<workdir>/workspaces/NAME``. Names are short ASCII
words (letters, digits, ``-`` and ``_``): a name can never reach outside
the folder.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path

from kgrag.api import KGRag
from kgrag.config import Settings
from kgrag.errors import KGRagError

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
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def folder(self, name: str) -> Path:
        if name == DEFAULT:
            return Path(self.settings.workdir)
        return Path(self.settings.workdir) / "workspaces" / check_name(name)

    def names(self) -> list[str]:
        root = Path(self.settings.workdir) / "workspaces"
        named = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        return [DEFAULT, *(n for n in named if _NAME.match(n))]

    async def get(self, name: str) -> KGRag:
        """The open index of workspace ``name`` (created when allowed)."""
        check_name(name)
        async with self._lock:
            if name not in self._open:
                folder = self.folder(name)
                if name != DEFAULT and not folder.exists() and not self.create:
                    raise WorkspaceError(f"no workspace {name!r}")
                rag = KGRag(self.settings.with_overrides(workdir=folder))
                await rag.open(create=True)
                self._open[name] = rag
            return self._open[name]

    async def reopen(self, name: str) -> KGRag | None:
        """Serve workspace ``name`` from a fresh instance; the one it replaces (still open).

        For when the index's recorded settings changed under the open
        instance (its first indexing run settles the language): requests
        from now on get the new instance, and the caller closes the old one
        once no request can be using it.
        """
        check_name(name)
        async with self._lock:
            rag = KGRag(self.settings.with_overrides(workdir=self.folder(name)))
            await rag.open(create=True)
            old, self._open[name] = self._open.get(name), rag
            return old

    async def close(self) -> None:
        async with self._lock:
            for rag in self._open.values():
                await rag.close()
            self._open.clear()
