"""Accounts: a JSON file of users, their argon2 password hashes and workspaces.

The file maps each user to ``{"password_hash": "$argon2id$...",
"workspaces": ["a", "b"]}`` (``"*"``: every workspace). It is read when the
server starts and written only by :func:`add_account` (``kgrag serve
--add-account``), readable by its owner alone. Checking a password takes
the same time whether the user exists or not.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from kgrag.config.server import WORKSPACE
from kgrag.errors import ConfigError

_USER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
_HASHER = PasswordHasher()
_DUMMY = _HASHER.hash("not a password of anyone")


@dataclass(frozen=True, slots=True)
class Account:
    """One user: the password hash and the workspaces the account may use."""

    password_hash: str
    workspaces: frozenset[str]


def _account(user: str, entry: object) -> Account:
    if not isinstance(entry, dict) or not isinstance(entry.get("password_hash"), str):
        raise ConfigError(f"account {user!r} needs a password_hash")
    spaces = entry.get("workspaces")
    if not isinstance(spaces, list) or not spaces:
        raise ConfigError(f"account {user!r} needs a list of workspaces")
    if bad := [s for s in spaces if not isinstance(s, str) or not WORKSPACE.match(s)]:
        raise ConfigError(f"account {user!r} names an invalid workspace {bad[0]!r}")
    return Account(entry["password_hash"], frozenset(spaces))


@dataclass(frozen=True, slots=True)
class Accounts:
    """The accounts file's users, read once."""

    users: dict[str, Account]

    @classmethod
    def load(cls, path: Path) -> Accounts:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read accounts file {path}: {exc}") from None
        if not isinstance(data, dict) or not data:
            raise ConfigError(f"accounts file {path} holds no accounts")
        return cls({str(user): _account(str(user), entry) for user, entry in data.items()})

    def workspaces_of(self, user: str) -> frozenset[str] | None:
        account = self.users.get(user)
        return account.workspaces if account else None

    def check_password(self, user: str, password: str) -> frozenset[str] | None:
        """The user's workspaces when the password is right (same work for unknown users)."""
        account = self.users.get(user)
        try:
            _HASHER.verify(account.password_hash if account else _DUMMY, password)
        except (VerificationError, InvalidHashError):
            return None
        return account.workspaces if account else None


def add_account(path: Path, user: str, password: str, workspaces: list[str]) -> None:
    """Add or replace ``user`` in the accounts file (created, mode 0600)."""
    if not _USER.match(user):
        raise ConfigError(f"invalid user name {user!r}: letters, digits and _ . @ - only")
    bad = [name for name in workspaces if not WORKSPACE.match(name)]
    if bad or not workspaces:
        raise ConfigError(f"invalid workspace list {workspaces!r}: names or '*'")
    if len(password) < 8:
        raise ConfigError("the password must have at least 8 characters")
    path = Path(path)
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data[user] = {"password_hash": _HASHER.hash(password), "workspaces": workspaces}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=2, sort_keys=True)
    os.replace(tmp, path)
