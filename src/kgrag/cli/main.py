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
    kgrag rebuild [--workdir W]
    kgrag query   [--workdir W] [--mode M] [...] QUESTION

Settings come from ``KGRAG_*`` variables (and ``.env``), read once here;
``--workdir`` overrides ``KGRAG_WORKDIR``. Progress goes to stderr, results
to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from kgrag.errors import KGRagError


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
    from kgrag.cli import docs_cmd, query_cmd

    parser = argparse.ArgumentParser(
        prog="kgrag", description="Graph-based retrieval-augmented generation."
    )
    sub = parser.add_subparsers(dest="command", required=True)

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
    _writer(p)

    p = sub.add_parser("status", help="documents by status, graph size, LLM cost")
    _common(p)

    p = sub.add_parser(
        "retry",
        help="retry failed documents and those with chunk warnings; "
        "resume interrupted runs and pending summaries",
    )
    _common(p)
    _writer(p)

    docs_cmd.add_parsers(sub, _common, _writer)
    query_cmd.add_parser(sub, _common)
    return parser


def load_settings(args: argparse.Namespace):
    from kgrag.config import Settings

    settings = Settings()
    update: dict = {}
    if getattr(args, "workdir", None):
        update["workdir"] = args.workdir
    if getattr(args, "no_wait", False):
        update["wait_for_writer"] = False
    if getattr(args, "encoding", None):
        update["input_encoding"] = args.encoding
    if getattr(args, "follow_symlinks", False):
        update["follow_symlinks"] = True
    return settings.model_copy(update=update) if update else settings


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings(args)
        if args.command in ("index", "retry", "status"):
            from kgrag.cli import index_cmd

            return asyncio.run(index_cmd.run(args, settings))
        if args.command != "query":
            from kgrag.cli import docs_cmd

            return asyncio.run(docs_cmd.run(args, settings))
        from kgrag.cli import query_cmd

        return asyncio.run(query_cmd.run(args, settings))
    except KGRagError as exc:
        print(f"kgrag: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kgrag: interrupted; run the same command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
