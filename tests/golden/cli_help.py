"""Goldens of every ``kgrag --help`` text: the top level and each (nested) subcommand."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
from collections.abc import Iterator
from pathlib import Path

from kgrag.cli.main import build_parser, main

COLUMNS = "100"  # argparse wraps to the terminal's width; fixed here


def commands(
    parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[str, ...]]:
    """Every command path below ``parser`` (``()`` for the top level), depth first."""
    yield prefix
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in sorted(action.choices.items()):
                yield from commands(sub, (*prefix, name))


def help_text(command: tuple[str, ...]) -> str:
    """What ``kgrag COMMAND --help`` prints."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main([*command, "--help"])
    return out.getvalue()


def write_help(out: Path) -> None:
    """One file per command: ``kgrag.txt``, ``kgrag-index.txt``, ``kgrag-eval-recall.txt``..."""
    out.mkdir(parents=True, exist_ok=True)
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = COLUMNS
    try:
        for command in commands(build_parser()):
            name = "-".join(("kgrag", *command))
            (out / f"{name}.txt").write_text(help_text(command), encoding="utf-8")
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
