"""Small argument parsers shared by the commands."""

from __future__ import annotations

from kgrag.errors import ConfigError


def parse_pairs(pairs: list[str], flag: str) -> dict[str, str]:
    """``KEY=VALUE`` strings as a dict; a malformed one is a :class:`ConfigError` naming ``flag``."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{flag} expects KEY=VALUE, got {pair!r}")
        out[key.strip()] = value.strip()
    return out
