"""Named workspaces on PostgreSQL: each one a PostgreSQL workspace of its own.

The server's default workspace is the base workspace (``postgres_workspace``,
by default the workdir's folder name, as for ``kgrag index``); a named
workspace ``NAME`` is ``<base>__<code>``, where the code spells ``NAME`` in
PostgreSQL's ``a-z0-9_`` with ``_`` as an escape: lowercase letters and
digits stand for themselves, ``__`` for ``_``, ``_0`` for ``-`` and ``_x``
for ``X``. So ``team-a``, ``team_a`` and ``Team-A`` stay three workspaces
(``team_0a``, ``team__a``, ``_team_0_a``), and every schema named
``kgrag_<base>__...`` reads back as the one name it came from, which is how
a process lists the workspaces that other processes created.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import TYPE_CHECKING, cast

from kgrag.config.settings import Settings

if TYPE_CHECKING:
    from kgrag.storage.base import Storage
    from kgrag.storage.postgres.db import Conn
    from kgrag.storage.postgres.storage import PostgresStorage

SEPARATOR = "__"
MAX_WORKSPACE = 48  # what the postgres storage accepts
SCHEMA_PREFIX = "kgrag_"
_PLAIN = frozenset(string.ascii_lowercase + string.digits)
_LOWER = frozenset(string.ascii_lowercase)
_ESCAPED = {"_": "_", "0": "-"}


def on_postgres(settings: Settings) -> bool:
    return settings.store.backend == "postgres"


def base_workspace(settings: Settings) -> str:
    """The default workspace's PostgreSQL workspace (what ``kgrag index`` would open)."""
    from kgrag.storage.postgres import workspace_name

    return settings.postgres.workspace or workspace_name(
        Path(settings.store.workdir).resolve().name
    )


def encode(name: str) -> str:
    """``name`` (letters, digits, ``-``, ``_``) in ``a-z0-9_``, one way back."""
    out = []
    for char in name:
        if char in _PLAIN:
            out.append(char)
        elif char == "_":
            out.append("__")
        elif char == "-":
            out.append("_0")
        else:
            out.append("_" + char.lower())
    return "".join(out)


def decode(code: str) -> str | None:
    """The name :func:`encode` made ``code`` from; None for text it never makes."""
    out, chars = [], iter(code)
    for char in chars:
        if char in _PLAIN:
            out.append(char)
            continue
        if char != "_":
            return None
        following = next(chars, None)
        if following is None:
            return None
        if following in _ESCAPED:
            out.append(_ESCAPED[following])
        elif following in _LOWER:
            out.append(following.upper())
        else:
            return None
    return "".join(out)


def workspace_of(base: str, name: str) -> str:
    """The PostgreSQL workspace of named workspace ``name`` (it may be too long: check it)."""
    return base + SEPARATOR + encode(name)


def name_of(base: str, schema: str) -> str | None:
    """The named workspace whose schema is ``schema``, if it is one of ``base``'s."""
    prefix = SCHEMA_PREFIX + base + SEPARATOR
    if not schema.startswith(prefix):
        return None
    return decode(schema[len(prefix) :])


async def stored_names(storage: Storage, base: str) -> list[str]:
    """Every named workspace of ``base`` with a schema in the database, via ``storage``'s pool.

    ``storage`` is the default workspace's, a PostgreSQL store (the caller checked
    :func:`on_postgres`).
    """
    prefix = SCHEMA_PREFIX + base + SEPARATOR
    schemas = await cast("PostgresStorage", storage).db.read(_schemas, prefix)
    return [n for n in (name_of(base, s) for s in schemas) if n]


async def _schemas(conn: Conn, prefix: str) -> list[str]:
    cur = await conn.execute(
        "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, %s) ORDER BY nspname",
        (prefix,),
    )
    return [row[0] for row in await cur.fetchall()]
