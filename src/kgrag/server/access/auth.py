"""Who is calling, and which workspaces they may use.

A :class:`Principal` comes from an API key (``X-API-Key`` or
``Authorization: Bearer <key>``), compared in constant time, or from an
account's JWT (:mod:`kgrag.server.access.tokens`, :mod:`kgrag.server.access.accounts`). With no key and no
accounts configured the server is open, and :mod:`kgrag.cli.serve_cmd`
then binds to loopback only.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from kgrag.config.settings import Settings
from kgrag.server.access.accounts import Accounts
from kgrag.server.access.tokens import TokenSigner, check_secret

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


# --- the server's authenticator: API keys and account tokens -----------------


@dataclass(frozen=True, slots=True)
class Authenticator:
    """Turns a request's credential into a :class:`Principal` (None: refused)."""

    keys: KeyRing
    signer: TokenSigner | None = None
    accounts: Accounts | None = None

    @property
    def modes(self) -> list[str]:
        return [m for m, on in (("api-key", self.keys.keys), ("accounts", self.accounts)) if on]

    def authenticate(self, given: str) -> Principal | None:
        found = self.keys.lookup(given) if self.keys.keys else None
        if found is None and self.signer is not None and self.accounts is not None:
            claims = self.signer.verify(given)
            spaces = self.accounts.workspaces_of(claims.user) if claims else None
            found = Principal(f"user:{claims.user}", spaces) if claims and spaces else None
        return found

    def login(self, user: str, password: str) -> str | None:
        """A fresh token for a right password, else None."""
        if self.signer is None or self.accounts is None:
            return None
        spaces = self.accounts.check_password(user, password)
        return self.signer.issue(user) if spaces is not None else None


def key_ring(settings: Settings) -> KeyRing:
    """``api_key`` (every workspace) and ``api_keys`` (key -> workspaces) together."""
    keys = {key: frozenset(spaces) for key, spaces in settings.server.api_keys.items()}
    if settings.server.api_key:
        keys[settings.server.api_key] = frozenset({ALL})
    return KeyRing(keys)


def from_settings(settings: Settings) -> Authenticator | None:
    """The authenticator the settings configure; None when no key and no accounts are set.

    Accounts need a sound ``jwt_secret`` (:func:`kgrag.server.access.tokens.check_secret`).
    """
    keys = key_ring(settings)
    if settings.server.accounts_file is None:
        return Authenticator(keys) if keys.keys else None
    signer = TokenSigner(check_secret(settings.server.jwt_secret), settings.server.token_minutes)
    return Authenticator(keys, signer, Accounts.load(settings.server.accounts_file))
