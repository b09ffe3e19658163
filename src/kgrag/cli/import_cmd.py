"""``kgrag import``: a kgrag export, a LightRAG working directory, or a user-built graph.

    kgrag import [--workdir W] --from kgrag FILE.json
    kgrag import [--workdir W] --from lightrag DIR [--root FOLDER] [--vectors MODE]
    kgrag import [--workdir W] --kg FILE.json

Like ``kgrag index``, it creates the index when the workdir holds none.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from kgrag.cli.index_cmd import waiting_message
from kgrag.cli.opening import opened

if TYPE_CHECKING:
    from kgrag.cli.args import AddFlags, Subcommands
    from kgrag.config.settings import Settings


def add_parser(sub: Subcommands, common: AddFlags, writer: AddFlags) -> None:
    p = sub.add_parser(
        "import",
        help="import a kgrag export, a LightRAG working directory or a user-built graph",
    )
    common(p)
    writer(p)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--from",
        dest="source",
        choices=["kgrag", "lightrag"],
        help="kgrag: a JSON export (`kgrag export --format json`); "
        "lightrag: a LightRAG 1.5 working directory",
    )
    what.add_argument(
        "--kg",
        action="store_true",
        help="PATH is a user-built graph (chunks, entities, relationships; "
        "LightRAG's insert_custom_kg shape)",
    )
    p.add_argument("path", metavar="PATH", help="the file or folder to import")
    p.add_argument(
        "--root",
        metavar="FOLDER",
        help="lightrag: the folder its file paths are relative to; documents found "
        "there are known by their files (re-indexing them finds them unchanged)",
    )
    p.add_argument(
        "--vectors",
        choices=["auto", "reuse", "recompute"],
        default="auto",
        help="lightrag: reuse its vectors (auto: when this index's embedder "
        "reproduces them), or embed everything again",
    )


async def run(args: argparse.Namespace, settings: Settings) -> int:
    source = "kg" if args.kg else args.source
    async with opened(settings, create=True) as rag:
        rag.on_writer_wait = waiting_message
        report = await rag.import_graph(
            args.path, source=source, root=args.root, vectors=args.vectors
        )
    out = report.to_dict()
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    for warning in report.warnings:
        print(f"warning: {warning}")
    print(
        f"imported {out['documents']} document(s), {out['chunks']} chunk(s) from {source} "
        f"{args.path}; the index holds {out['entities']} entities, {out['relations']} relations "
        f"({out['vectors_reused']} vectors reused, {out['vectors_embedded']} embedded)"
    )
    return 0
