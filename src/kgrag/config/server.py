"""The server section of :class:`kgrag.config.settings.Settings`, and its checks.

``KGRAG_API_KEYS`` is JSON (key -> the workspaces it opens, ``*`` for all);
``KGRAG_CORS_ORIGINS`` is a comma-separated list (or JSON) of origins,
each ``scheme://host[:port]`` and never ``*``. Each function raises
ValueError saying in one line what is wrong.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, Field
from pydantic_settings import NoDecode

KEYS_FORMAT = 'a JSON object {"key": ["workspace", ...]} ("*": every workspace)'
MIN_KEY_CHARS = 16
WORKSPACE = re.compile(r"^(\*|[A-Za-z0-9][A-Za-z0-9_-]{0,63})$")
_ORIGIN = re.compile(r"^https?://[A-Za-z0-9.\-\[\]:]+$")


def _json(value: str, expected: str) -> object:
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise ValueError(f"is not JSON ({exc.msg}); expected {expected}") from None


def api_keys(value: object) -> dict[str, list[str]]:
    """The key ring's entries, each key at least 16 characters, each workspace a valid name."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        value = _json(value, KEYS_FORMAT)
    if not isinstance(value, dict):
        raise ValueError(f"expected {KEYS_FORMAT}, got {type(value).__name__}")
    out: dict[str, list[str]] = {}
    for i, (key, spaces) in enumerate(value.items(), start=1):
        if not isinstance(key, str) or len(key) < MIN_KEY_CHARS:
            raise ValueError(f"key {i} is shorter than {MIN_KEY_CHARS} characters")
        if isinstance(spaces, str):
            spaces = [spaces]
        if not isinstance(spaces, list) or not spaces:
            raise ValueError(f"key {i} must list its workspaces")
        bad = [s for s in spaces if not isinstance(s, str) or not WORKSPACE.match(s)]
        if bad:
            raise ValueError(f"key {i} names an invalid workspace {bad[0]!r}")
        out[key] = list(spaces)
    return out


def origins(value: object) -> list[str]:
    """The CORS origins, ``scheme://host[:port]`` each (no path, no wildcard)."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        text = value.strip()
        value = _json(text, "a list of origins") if text.startswith("[") else text.split(",")
    if not isinstance(value, list | tuple):
        raise ValueError(f"expected a list of origins, got {type(value).__name__}")
    out = []
    for origin in (str(o).strip().rstrip("/") for o in value):
        if origin == "*":
            raise ValueError("'*' is not allowed: list the origins that may call the server")
        if not _ORIGIN.match(origin):
            raise ValueError(f"origin {origin!r} must be scheme://host[:port], nothing after")
        out.append(origin)
    return out


ApiKeys = Annotated[dict[str, list[str]], NoDecode, BeforeValidator(api_keys)]
Origins = Annotated[list[str], NoDecode, BeforeValidator(origins)]


class ServerSettings(BaseModel):
    """``kgrag serve`` (docs/server.md): address, keys, accounts, CORS, body limits."""

    host: str = Field("127.0.0.1", description="Address `kgrag serve` listens on.")
    port: int = Field(9621, ge=0, le=65535, description="Port `kgrag serve` listens on.")
    api_key: str | None = Field(
        None,
        min_length=MIN_KEY_CHARS,
        description="API key opening every workspace (X-API-Key or Bearer).",
    )
    api_keys: ApiKeys = Field(
        default_factory=dict,
        description='API keys bound to workspaces: JSON {"key": ["ws1", "ws2"]} ("*": all).',
    )
    jwt_secret: str | None = Field(
        None, description="HS256 secret signing account tokens (at least 32 bytes, not a default)."
    )
    accounts_file: Path | None = Field(
        None,
        description="JSON accounts: user -> {password_hash (argon2), workspaces}; enables /login.",
    )
    token_minutes: int = Field(
        720, ge=1, le=60 * 24 * 30, description="Minutes an account token from /login stays valid."
    )
    cors_origins: Origins = Field(
        default_factory=list,
        description="Origins allowed cross-origin calls (comma-separated); none: no CORS at all.",
    )
    max_body_mb: float = Field(
        8.0, gt=0, description="Largest request body in MiB (JSON and forms); larger: 413."
    )
    max_upload_mb: float = Field(
        100.0, gt=0, description="Largest multipart upload body in MiB; larger: 413."
    )
    create_workspaces: bool = Field(
        True, description="Create a named workspace on its first use (off: 404 for a new name)."
    )
