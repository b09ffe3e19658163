"""Small argument parsers shared by the commands, and the types commands add parsers with."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeAlias

from kgrag.errors import ConfigError

# what ``add_subparsers()`` returns: each command adds its parser to it
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
# adds a group of flags shared by several commands (``--workdir``/``--json``, the writer's)
AddFlags: TypeAlias = Callable[[argparse.ArgumentParser], None]


def parse_pairs(pairs: list[str], flag: str) -> dict[str, str]:
    """``KEY=VALUE`` strings as a dict; a malformed one is a :class:`ConfigError` naming ``flag``."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{flag} expects KEY=VALUE, got {pair!r}")
        out[key.strip()] = value.strip()
    return out
