"""The ``kgrag`` command line.

    kgrag index   [--workdir W] [--json] [--meta K=V] [--replace OLD] [--encoding E]
                  [--follow-symlinks] [--strict] PATH...
    kgrag status  [--workdir W] [--json]
    kgrag retry   [--workdir W] [--json]
    kgrag delete  [--workdir W] DOC_ID... | --path GLOB
    kgrag disable / enable [--workdir W] DOC_ID... | --path GLOB
    kgrag docs    [--workdir W] [--json] [--offset N] [--limit N]
    kgrag check   [--workdir W] [--repair]
    kgrag export  [--workdir W] --output PATH [--no-timestamps]
    kgrag import  [--workdir W] --from kgrag|lightrag PATH | --kg FILE.json
    kgrag migrate --from sqlite:PATH|postgres:DSN --to ... [--workspace N] [--overwrite] [--verify]
    kgrag rebuild [--workdir W]
    kgrag enqueue [--workdir W] [--meta K=V] PATH...
    kgrag worker  [--workdir W] [--concurrency N] [--lease S] [--exit-when-idle]
    kgrag dedupe  [--workdir W] [--dry-run | --apply] [--min-score S] [--llm] [--report PATH]
    kgrag query   [--workdir W] [--mode M] [...] QUESTION
    kgrag config  [--workdir W] [--json]
    kgrag eval    recall|answers|compare [--workdir W] [--json] [--report PATH] QUESTIONS...
    kgrag cost    [--workdir W] [--since DATE] [--json] [--by document|model] [--top N]
    kgrag mcp     [--workdir W] [--create]
    kgrag serve   [--workdir W] [--host H] [--port P] [--accounts-file F]
                  | --add-account USER [--workspaces a,b]

Settings come from ``KGRAG_*`` variables (and ``.env``), read once here;
``--workdir`` overrides ``KGRAG_WORKDIR``; an index's remembered settings
fill in the rest (:mod:`kgrag.indexing.manifest`). Only ``index`` creates an index.
Progress goes to stderr, results to stdout. Exit statuses:
:data:`kgrag.cli.opening.EXIT_CODES` (also in ``kgrag --help``).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from kgrag.cli.opening import EXIT_CODES, INTERRUPTED, exit_status
from kgrag.errors import KGRagError

if TYPE_CHECKING:
    from kgrag.cli.args import Subcommands
    from kgrag.config.settings import Settings

# a command's ``run(args, settings)``: its exit status
Run = Callable[[argparse.Namespace, "Settings"], Awaitable[int]]


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workdir", help="index folder (default: $KGRAG_WORKDIR or ./kgrag_data)")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of text")


def _writer(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="fail at once if another process is writing to the workdir",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def build_parser() -> argparse.ArgumentParser:
    from kgrag.cli import (
        config_cmd,
        curate_cmd,
        dedupe_cmd,
        docs_cmd,
        import_cmd,
        query_cmd,
        worker_cmd,
    )
    from kgrag.cli.cost_cmd import add_parser as add_cost_parser
    from kgrag.cli.eval_cmd import add_parser as add_eval_parser
    from kgrag.cli.mcp_cmd import add_parser as add_mcp_parser
    from kgrag.cli.migrate_cmd import add_parser as add_migrate_parser
    from kgrag.cli.serve_cmd import add_parser as add_serve_parser

    parser = argparse.ArgumentParser(
        prog="kgrag",
        description="Graph-based retrieval-augmented generation.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _add_index(sub)
    p = sub.add_parser("status", help="documents by status, graph size, settings, LLM cost")
    _common(p)
    p = sub.add_parser(
        "retry",
        help="retry failed documents and those with chunk warnings; "
        "resume interrupted runs and pending summaries",
    )
    _common(p)
    _writer(p)
    docs_cmd.add_parsers(sub, _common, _writer)
    curate_cmd.add_parsers(sub, _common, _writer)
    dedupe_cmd.add_parser(sub, _common, _writer)
    query_cmd.add_parser(sub, _common)
    config_cmd.add_parser(sub, _common)
    import_cmd.add_parser(sub, _common, _writer)
    add_migrate_parser(sub, _writer)
    worker_cmd.add_parsers(sub, _common, _writer)
    add_eval_parser(sub, _common)
    add_cost_parser(sub, _common)
    add_mcp_parser(sub)
    add_serve_parser(sub)
    for command in sub.choices.values():  # every command's --help ends with the table
        command.epilog = EXIT_CODES
        command.formatter_class = argparse.RawDescriptionHelpFormatter
    return parser


def _add_index(sub: Subcommands) -> None:

    p = sub.add_parser(
        "index",
        help="index files and folders (text, Markdown, HTML, PDF, Office, EPUB, "
        "CSV/JSON/XML, code); edited files supersede their old version",
    )
    _common(p)
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument(
        "--meta",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="metadata stored with every document of this run (repeatable)",
    )
    p.add_argument(
        "--replace", metavar="OLD_ID", help="the one new file supersedes this document (id or path)"
    )
    p.add_argument(
        "--encoding",
        metavar="NAME",
        help="read text and HTML files with this codec instead of detecting it "
        "(a byte order mark still wins; $KGRAG_INPUT_ENCODING)",
    )
    p.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="follow symlinks that leave the folder being indexed",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="any file that cannot be used is an error: exit 1, index nothing",
    )
    p.add_argument(
        "--reset-if-settings-changed",
        action="store_true",
        help="when the embedder, extractor or chunking set differ from the index's, "
        "empty the index and index afresh (without it, such a difference is an error)",
    )
    _writer(p)


# flag -> (setting, value it sets); a flag left out sets nothing
_FLAGS = {
    "workdir": ("workdir", None),
    "no_wait": ("wait_for_writer", False),
    "encoding": ("input_encoding", None),
    "follow_symlinks": ("follow_symlinks", True),
}


def flag_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the command line's flags set (``--workdir`` -> ``workdir``)."""
    update: dict[str, Any] = {}
    for flag, (field, value) in _FLAGS.items():
        given = getattr(args, flag, None)
        if given:
            update[field] = given if value is None else value
    return update


def load_settings(args: argparse.Namespace) -> Settings:
    """The environment's settings (validated) with the command line's flags applied."""
    from kgrag.config.settings import Settings

    return Settings().with_overrides(**flag_overrides(args))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return asyncio.run(_dispatch(args, load_settings(args)))
    except KGRagError as exc:
        print(f"kgrag: error: {exc}", file=sys.stderr)
        return exit_status(exc)
    except KeyboardInterrupt:
        print("kgrag: interrupted; run the same command again to resume", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`kgrag config | head`): not an error of ours.
        # Point stdout at /dev/null so the interpreter's final flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


# command -> the module (kgrag.cli.<name>) whose ``run(args, settings)`` carries it out
_RUNNERS = {
    **dict.fromkeys(("index", "retry", "status"), "index_cmd"),
    **dict.fromkeys(
        ("entity", "relation", "merges", "unmerge", "split", "splits", "unsplit"), "curate_cmd"
    ),
    **dict.fromkeys(("enqueue", "worker"), "worker_cmd"),
    "query": "query_cmd",
    "import": "import_cmd",
    "migrate": "migrate_cmd",
    "dedupe": "dedupe_cmd",
    "cost": "cost_cmd",
    "eval": "eval_cmd",
    "serve": "serve_cmd",
    "mcp": "mcp_cmd",
}


async def _dispatch(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "config":
        from kgrag.cli import config_cmd

        return await config_cmd.run(args, settings, flag_overrides(args))
    module = importlib.import_module(f"kgrag.cli.{_RUNNERS.get(args.command, 'docs_cmd')}")
    run: Run = module.run
    return await run(args, settings)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
