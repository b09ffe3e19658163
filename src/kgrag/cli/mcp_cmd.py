"""``kgrag mcp``: the index's MCP tools over stdio, for desktop assistants and agents' hosts.

The client starts ``kgrag mcp --workdir W`` and speaks MCP on its stdin and
stdout (the tools: :mod:`kgrag.server.compat.mcp_tools`); nothing else is written
to stdout. Settings come from ``KGRAG_*`` as for every command. Without
``--create`` the workdir must hold an index already.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from kgrag.cli.opening import USAGE, opened

if TYPE_CHECKING:
    from kgrag.cli.args import Subcommands
    from kgrag.config.settings import Settings


def add_parser(sub: Subcommands) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve the index's tools (query, query_data, insert_text, list_documents, "
        "delete_document, get_entity) to an MCP client over stdio",
    )
    p.add_argument("--workdir", help="index folder (default: $KGRAG_WORKDIR or ./kgrag_data)")
    p.add_argument(
        "--create", action="store_true", help="make an empty index when the workdir holds none"
    )


async def run(args: argparse.Namespace, settings: Settings) -> int:
    try:
        from kgrag.server.compat.mcp_tools import Direct, build_mcp
    except ImportError as exc:
        print(
            f"kgrag: error: kgrag mcp needs pip install 'kgrag[server]' ({exc.name})",
            file=sys.stderr,
        )
        return USAGE
    async with opened(settings, create=args.create) as rag:
        index = Direct(rag)

        async def source(ctx: Any) -> Direct:
            return index

        await build_mcp(source).run_stdio_async()
    return 0
