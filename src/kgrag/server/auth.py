"""Who is calling, and which workspaces they may use.

A :class:`Principal` comes from an API key (``X-API-Key`` or
``Authorization: Bearer <key>``), compared in constant time, or from an
account's JWT (see the accounts part of this module). With no key and no
accounts configured the server is open, and :mod:`kgrag.cli.serve_cmd`
then binds to loopback only.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

ALL = "*"


@dataclass(frozen=True, slots=True)
class Principal:
    """A caller and the workspaces it may use (``*``: every one)."""

    name: str
    workspaces: frozenset[str]

    def may_use(self, workspace: str) -> bool:
        return ALL in self.workspaces or workspace in self.workspaces


ANONYMOUS = Principal("anonymous", frozenset({ALL}))


@dataclass(frozen=True, slots=True)
class KeyRing:
    """Configured API keys: key -> the workspaces it opens."""

    keys: dict[str, frozenset[str]]

    def lookup(self, given: str) -> Principal | None:
        """The key's principal, comparing every key in constant time."""
        found: Principal | None = None
        for i, (key, spaces) in enumerate(sorted(self.keys.items())):
            if hmac.compare_digest(key.encode(), given.encode()):
                found = Principal(f"key-{i + 1}", spaces)
        return found


def credentials(headers: dict[str, str]) -> str | None:
    """The key or token a request carries, if any (headers lower-cased)."""
    if key := headers.get("x-api-key"):
        return key
    scheme, _, value = headers.get("authorization", "").partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None
