"""``kgrag dedupe``: find the entities that name one thing, report them, merge them.

    kgrag dedupe [--dry-run | --apply] [--min-score S] [--llm] [--report PATH] [--json]

``--dry-run`` (the default) prints the groups with their scores and the
evidence for and against and writes nothing to the index; ``--report
PATH`` also writes the report as JSON to PATH and as text to PATH.txt.
``--apply`` merges the groups and prints the merge ids (undo one with
``kgrag unmerge ID``). ``--llm`` asks the chat model about undecided pairs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgrag.cli.index_cmd import waiting_message
from kgrag.cli.opening import OK, opened
from kgrag.errors import ConfigError

if TYPE_CHECKING:
    from kgrag.cli.args import AddFlags, Subcommands
    from kgrag.config.settings import Settings


def add_parser(sub: Subcommands, common: AddFlags, writer: AddFlags) -> None:
    p = sub.add_parser(
        "dedupe", help="find entities that name one thing (report them, or merge with --apply)"
    )
    common(p)
    writer(p)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="report only (the default)")
    mode.add_argument("--apply", action="store_true", help="merge the groups found")
    p.add_argument("--min-score", type=float, metavar="S", help="score a pair needs (default: 0.6)")
    p.add_argument("--llm", action="store_true", help="ask the chat model about undecided pairs")
    p.add_argument("--report", metavar="PATH", help="write the report as JSON (and PATH.txt)")


def _write(path: Path, data: dict[str, Any], text: str) -> None:
    try:
        path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        path.with_name(path.name + ".txt").write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the report to {path}: {exc.strerror}") from exc


async def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.min_score is not None and not 0 <= args.min_score <= 1:
        raise ConfigError(f"--min-score must be between 0 and 1, got {args.min_score:g}")
    async with opened(settings) as rag:
        rag.on_writer_wait = waiting_message
        report = await rag.resolve_entities(
            min_score=args.min_score, apply=args.apply, use_llm=args.llm
        )
    data, text = report.to_dict(), report.to_text()
    if args.report:
        _write(Path(args.report), data, text)
    print(json.dumps(data, ensure_ascii=False) if args.json else text)
    return OK
