"""Account tokens: HS256 JWTs signed with the server's secret, with an expiry.

Only HS256 is accepted: the header is checked before decoding and the
decoder is told ``algorithms=["HS256"]``, so ``alg: none`` and algorithm
switching are refused; ``exp`` is required and enforced. The secret must
be at least 32 bytes and not one of the defaults found in examples.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import jwt

from kgrag.errors import ConfigError

ALGORITHM = "HS256"
MIN_SECRET_BYTES = 32
# Defaults shipped in examples and templates (LightRAG's among them): never a secret.
KNOWN_DEFAULTS = frozenset(
    {
        "lightrag-jwt-default-secret",
        "lightrag-jwt-default-secret-key!",
        "your-secret-key",
        "your-secret-key-here-change-in-production",
        "change-me",
        "changeme",
        "secret",
        "jwt-secret",
        "supersecret",
        "please-change-this-secret-key-in-production",
    }
)


def check_secret(secret: str | None) -> str:
    """``secret`` when it is fit to sign tokens; a :class:`ConfigError` saying why not."""
    if not secret:
        raise ConfigError("accounts need jwt_secret (KGRAG_JWT_SECRET): 32 random bytes or more")
    if secret.strip().lower() in KNOWN_DEFAULTS:
        raise ConfigError("jwt_secret is a well-known default: use 32 random bytes or more")
    if len(secret.encode()) < MIN_SECRET_BYTES:
        raise ConfigError(f"jwt_secret is shorter than {MIN_SECRET_BYTES} bytes")
    if len(set(secret)) < 8:
        raise ConfigError("jwt_secret repeats a few characters: use a random one")
    return secret


@dataclass(frozen=True, slots=True)
class Claims:
    """What a valid token says: who, and until when."""

    user: str
    expires: int


@dataclass(frozen=True, slots=True)
class TokenSigner:
    """Issues and verifies HS256 tokens valid for ``minutes``."""

    secret: str
    minutes: int

    def issue(self, user: str, now: float | None = None) -> str:
        issued = int(time.time() if now is None else now)
        claims = {"sub": user, "iat": issued, "exp": issued + self.minutes * 60}
        return jwt.encode(claims, self.secret, algorithm=ALGORITHM)

    def verify(self, token: str) -> Claims | None:
        """The token's claims, or None when it is malformed, forged, of another alg, or expired."""
        try:
            if jwt.get_unverified_header(token).get("alg") != ALGORITHM:
                return None
            claims = jwt.decode(
                token, self.secret, algorithms=[ALGORITHM], options={"require": ["exp", "sub"]}
            )
        except jwt.PyJWTError:
            return None
        user = claims.get("sub")
        return Claims(user, int(claims["exp"])) if isinstance(user, str) else None
