"""``kgrag delete | disable | enable | docs | check | export | rebuild``."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING

from kgrag.api.facade import KGRag
from kgrag.cli.index_cmd import waiting_message
from kgrag.cli.opening import opened
from kgrag.ingest.names import display_name
from kgrag.maintenance.exports import FORMATS

if TYPE_CHECKING:
    from kgrag.cli.args import AddFlags, Subcommands
    from kgrag.config.settings import Settings

_SELECT = ("delete", "disable", "enable")


def add_parsers(sub: Subcommands, common: AddFlags, writer: AddFlags) -> None:
    for name, text in (
        ("delete", "remove documents and everything only they support"),
        ("disable", "keep documents indexed but never retrieve from them"),
        ("enable", "retrieve from disabled documents again"),
    ):
        p = sub.add_parser(name, help=text)
        common(p)
        writer(p)
        p.add_argument("ids", nargs="*", metavar="DOC_ID", help="document ids (or their paths)")
        p.add_argument(
            "--path",
            action="append",
            default=[],
            metavar="GLOB",
            help="documents whose path matches GLOB (repeatable)",
        )
        if name == "delete":
            p.add_argument(
                "--purge-cache",
                action="store_true",
                help="also drop the cached LLM answers of the removed chunks",
            )
    p = sub.add_parser("docs", help="list documents: id, path, status, chunks, metadata")
    common(p)
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--limit", type=int, default=50)
    p = sub.add_parser("check", help="verify that graph, vectors, chunks and records agree")
    common(p)
    writer(p)
    p.add_argument(
        "--repair",
        action="store_true",
        help="first rebuild the vectors and the lexical index from the primary data",
    )
    p = sub.add_parser("export", help="the whole graph as JSON, CSV, GraphML, Markdown or Parquet")
    common(p)
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="json",
        help="json: canonical, csv: folder of tables, graphml: Gephi/yEd/NetworkX/Neo4j, "
        "md: readable report, parquet: folder of GraphRAG-shaped tables (default: json)",
    )
    p.add_argument(
        "--output",
        required=True,
        metavar="PATH",
        help="file to write, or folder for csv and parquet ('-': stdout, one-file formats)",
    )
    p.add_argument("--no-timestamps", action="store_true", help="leave out created/updated times")
    p = sub.add_parser("rebuild", help="recompute the canonical graph from stored extractions")
    common(p)
    writer(p)


async def run(args: argparse.Namespace, settings: Settings) -> int:
    async with opened(settings) as rag:
        rag.on_writer_wait = waiting_message
        if args.command in _SELECT:
            if not args.ids and not args.path:
                print(f"kgrag {args.command}: give document ids or --path GLOB", file=sys.stderr)
                return 2
            return await _select(rag, args)
        return await _COMMANDS[args.command](rag, args)


async def _select(rag: KGRag, args: argparse.Namespace) -> int:
    started = time.perf_counter()
    if args.command == "delete":
        ids, stats = await rag.delete(args.ids, paths=args.path, purge_cache=args.purge_cache)
        out = {
            "deleted": ids,
            "chunks_removed": stats.chunks_removed,
            "entities_removed": stats.nodes_deleted,
            "relations_removed": stats.edges_deleted,
            "entities_updated": stats.nodes_written,
            "relations_updated": stats.edges_written,
        }
    else:
        ids = await rag.set_disabled(args.ids, args.command == "disable", paths=args.path)
        out = {f"{args.command}d": ids}
    out["seconds"] = round(time.perf_counter() - started, 3)
    if args.json:
        print(json.dumps(out))
    else:
        print(", ".join(f"{k}: {len(v) if isinstance(v, list) else v}" for k, v in out.items()))
    return 0


async def _docs(rag: KGRag, args: argparse.Namespace) -> int:
    page = await rag.documents(args.offset, args.limit)
    if args.json:
        print(json.dumps(page))
        return 0
    for d in page["documents"]:
        flags = " disabled" if d["disabled"] else ""
        warn = f" {len(d['warnings'])} warning(s)" if d["warnings"] else ""
        meta = " ".join(f"{k}={v}" for k, v in sorted(d["metadata"].items()))
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(d["updated_at"]))
        line = (
            f"{d['id']}  {d['status']:<10} {d['chunks']:>4} chunks  {when}  "
            f"{d['path']}{flags}{warn}  {meta}"
        )
        print(display_name(line.rstrip()))  # one line per document, whatever its name holds
    shown = len(page["documents"])
    print(f"{page['offset'] + 1 if shown else 0}-{page['offset'] + shown} of {page['total']}")
    return 0


async def _check(rag: KGRag, args: argparse.Namespace) -> int:
    report = await rag.check(repair=args.repair)
    if args.json:
        print(json.dumps({"ok": report.ok, "problems": report.problems, "counts": report.counts}))
    else:
        for problem in report.problems:
            print(f"problem: {problem}")
        counts = ", ".join(f"{v} {k}" for k, v in report.counts.items())
        print(
            ("index is consistent: " if report.ok else f"{len(report.problems)} problem(s); ")
            + counts
        )
    return 0 if report.ok else 1


async def _export(rag: KGRag, args: argparse.Namespace) -> int:
    from kgrag.maintenance.exports import FOLDER_FORMATS, check_format, render

    timestamps = not args.no_timestamps
    if args.output != "-":
        written = await rag.export_to(args.output, format=args.format, timestamps=timestamps)
        size = sum(p.stat().st_size for p in written)
        if args.json:
            print(json.dumps({"written": [str(p) for p in written], "bytes": size}))
        else:
            names = f" ({', '.join(p.name for p in written)})" if len(written) > 1 else ""
            print(f"wrote {args.output}{names}: {size} bytes")
        return 0
    if args.format in FOLDER_FORMATS:
        print(
            f"kgrag export: --format {args.format} writes a folder; give --output DIR",
            file=sys.stderr,
        )
        return 2
    check_format(args.format)
    sys.stdout.write(render(await rag.export(timestamps=timestamps), args.format))
    return 0


async def _rebuild(rag: KGRag, args: argparse.Namespace) -> int:
    report = await rag.rebuild()
    print(
        json.dumps(
            {
                "processed": len(report.processed),
                "failed": len(report.failed),
                "seconds": round(report.insert_s, 3),
            }
        )
        if args.json
        else f"rebuilt from {len(report.processed)} document(s) in {report.insert_s:.1f} s"
        + (f"; {len(report.failed)} failed" if report.failed else "")
    )
    return 0 if not report.failed else 1


_COMMANDS = {"docs": _docs, "check": _check, "export": _export, "rebuild": _rebuild}
