"""``kgrag config``: the effective settings and where each came from.

Sources, strongest first: the command line (``--workdir``), the
environment (the variable is named), ``.env``, the index's remembered
settings (:mod:`kgrag.indexing.manifest`), the default. API keys are masked. The
workdir need not hold an index; one that does fills in its settings, and a
set value contradicting them is reported like for any other command (exit 2).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgrag.config.check import mask
from kgrag.config.fields import FIELDS
from kgrag.config.settings import Settings, setting_source
from kgrag.indexing import manifest
from kgrag.storage.base import Storage

if TYPE_CHECKING:
    from kgrag.cli.args import AddFlags, Subcommands

# setting -> the flag that sets it (see kgrag.cli.main.flag_overrides)
_FLAG_OF = {
    "workdir": "--workdir",
    "wait_for_writer": "--no-wait",
    "input_encoding": "--encoding",
    "follow_symlinks": "--follow-symlinks",
}


def add_parser(sub: Subcommands, common: AddFlags) -> None:
    p = sub.add_parser(
        "config",
        help="the effective settings and where each came from (default, .env, "
        "environment, index, command line); secrets masked",
    )
    common(p)


async def run(args: argparse.Namespace, settings: Settings, flags: dict[str, Any]) -> int:
    remembered = await _remembered(settings)
    applied = manifest.apply(settings, remembered)
    rows = sources(applied, set(flags))
    if args.json:
        print(json.dumps({name: {"value": v, "source": s} for name, v, s in rows}))
        return 0
    width = max(len(name) for name, _, _ in rows)
    for name, value, source in rows:
        print(f"{name:<{width}}  {_show(value)}  [{source}]")
    return 0


def sources(applied: manifest.Applied, flags: set[str]) -> list[tuple[str, Any, str]]:
    """``(setting, value, source)`` for every setting, values masked and JSON-ready."""
    rows = []
    for name in FIELDS:
        if name in flags:
            source = f"command line ({_FLAG_OF.get(name, name)})"
        elif name in applied.from_index:
            source = "index"
        else:
            source = setting_source(applied.settings, name)
        value = applied.settings.value(name)
        rows.append((name, mask(name, str(value) if isinstance(value, Path) else value), source))
    return rows


def _show(value: Any) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


async def _remembered(settings: Settings) -> dict[str, Any] | None:
    """The index's record, when the workdir holds an index (nothing is created)."""
    from kgrag.storage.registry import storage_for

    storage: Storage = storage_for(settings)
    if not await storage.exists():
        return None
    await storage.open()
    try:
        return await manifest.load(storage)
    finally:
        await storage.close()
