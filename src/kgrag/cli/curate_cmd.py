"""``kgrag entity | relation | merges | unmerge | split | splits | unsplit``: correct the graph.

    kgrag entity create NAME [--type T] [--description D]
    kgrag entity edit NAME [--type T] [--description D] [--clear FIELD]...
    kgrag entity rename OLD NEW
    kgrag entity delete NAME / restore NAME
    kgrag entity merge SOURCE... --into TARGET
    kgrag relation create|edit SOURCE TARGET [--description D] [--keywords K] [--weight W]
    kgrag relation delete|restore SOURCE TARGET
    kgrag merges [--json]
    kgrag unmerge MERGE_ID
    kgrag split NAME --part NEW_NAME=CHUNK_ID[,CHUNK_ID...] [--part ...]
    kgrag splits [--json]
    kgrag unsplit SPLIT_ID

Every edit is a curation record (docs/curation.md): it survives re-indexing
and the deletion of the documents it touches. A name, relation or merge id
that names nothing, or an edit the records refuse, exits 2 (like an unknown
document id): the command line is what needs fixing.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from kgrag.api.facade import KGRag
from kgrag.cli.index_cmd import waiting_message
from kgrag.cli.opening import USAGE, opened
from kgrag.errors import CurationError

if TYPE_CHECKING:
    from kgrag.cli.args import AddFlags, Subcommands
    from kgrag.config.settings import Settings

COMMANDS = ("entity", "relation", "merges", "unmerge", "split", "splits", "unsplit")
_ENTITY = ("create", "edit", "rename", "delete", "restore", "merge")
_RELATION = ("create", "edit", "delete", "restore")


def add_parsers(sub: Subcommands, common: AddFlags, writer: AddFlags) -> None:
    p = sub.add_parser("entity", help="create, edit, rename, delete, restore or merge entities")
    actions = p.add_subparsers(dest="action", required=True)
    for name in _ENTITY:
        a = actions.add_parser(name, help=f"{name} an entity")
        common(a)
        writer(a)
        _entity_args(a, name)
    p = sub.add_parser("relation", help="create, edit, delete or restore relations")
    actions = p.add_subparsers(dest="action", required=True)
    for name in _RELATION:
        a = actions.add_parser(name, help=f"{name} a relation")
        common(a)
        writer(a)
        a.add_argument("source")
        a.add_argument("target")
        if name in ("create", "edit"):
            a.add_argument("--description")
            a.add_argument("--keywords", help="comma-separated")
            a.add_argument("--weight", type=float)
    p = sub.add_parser("merges", help="recorded merges (id, target, sources, origin, evidence)")
    common(p)
    p = sub.add_parser("unmerge", help="undo a merge (ids: kgrag merges)")
    common(p)
    writer(p)
    p.add_argument("merge_id", metavar="MERGE_ID")
    _split_parsers(sub, common, writer)


def _split_parsers(sub: Subcommands, common: AddFlags, writer: AddFlags) -> None:
    p = sub.add_parser("split", help="separate a homonym by chunk (undo: kgrag unsplit)")
    common(p)
    writer(p)
    p.add_argument("name", metavar="NAME")
    p.add_argument(
        "--part",
        action="append",
        required=True,
        type=_part,
        metavar="NEW_NAME=CHUNK_ID[,CHUNK_ID...]",
        help="the chunks whose mentions of NAME become NEW_NAME (repeatable)",
    )
    p = sub.add_parser("splits", help="recorded splits (id, name, parts)")
    common(p)
    p = sub.add_parser("unsplit", help="undo a split (ids: kgrag splits)")
    common(p)
    writer(p)
    p.add_argument("split_id", metavar="SPLIT_ID")


def _part(text: str) -> tuple[str, list[str]]:
    """``NEW_NAME=C1,C2`` as (new name, chunk ids); the name is split at the last ``=``."""
    new, sep, ids = text.rpartition("=")
    chunks = [c.strip() for c in ids.split(",") if c.strip()]
    if not sep or not new.strip() or not chunks:
        raise argparse.ArgumentTypeError(f"expected NEW_NAME=CHUNK_ID[,CHUNK_ID...], got {text!r}")
    return new.strip(), chunks


def _entity_args(a: argparse.ArgumentParser, name: str) -> None:
    if name == "merge":
        a.add_argument("sources", nargs="+", metavar="SOURCE")
        a.add_argument("--into", required=True, metavar="TARGET", help="the entity that stays")
        return
    a.add_argument("name", metavar="OLD" if name == "rename" else "NAME")
    if name == "rename":
        a.add_argument("new", metavar="NEW")
    if name in ("create", "edit"):
        a.add_argument("--type", dest="entity_type")
        a.add_argument("--description")
    if name == "edit":
        a.add_argument(
            "--clear",
            action="append",
            default=[],
            choices=["description", "entity_type"],
            help="drop this field's override (repeatable)",
        )


async def run(args: argparse.Namespace, settings: Settings) -> int:
    async with opened(settings) as rag:
        rag.on_writer_wait = waiting_message
        try:
            out = await _do(rag, args)
        except CurationError as exc:
            print(f"kgrag: error: {exc}", file=sys.stderr)
            return USAGE
    if isinstance(out, list):  # the listings: merges, splits
        (_print_merges if args.command == "merges" else _print_splits)(out, args.json)
    elif getattr(args, "json", False):
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(", ".join(f"{k}: {v}" for k, v in out.items()))
    return 0


# what a change prints (``{"merged": [...], "into": ..., "merge_id": ...}``)
Done = dict[str, object]
# a listing: the recorded merges or splits
Rows = list[dict[str, Any]]


async def _do(rag: KGRag, args: argparse.Namespace) -> Done | Rows:
    if args.command == "merges":
        return await rag.merges()
    if args.command == "unmerge":
        await rag.unmerge(args.merge_id)
        return {"unmerged": args.merge_id}
    if args.command in ("split", "splits", "unsplit"):
        return await _split(rag, args)
    if args.command == "relation":
        return await _relation(rag, args)
    return await _entity(rag, args)


async def _entity(rag: KGRag, args: argparse.Namespace) -> Done:
    act = args.action
    if act == "merge":
        mid = await rag.merge_entities(args.into, args.sources)
        return {"merged": args.sources, "into": args.into, "merge_id": mid}
    if act == "rename":
        mid = await rag.rename_entity(args.name, args.new)
        return {"renamed": args.name, "to": args.new, "merge_id": mid}
    if act == "create":
        await rag.create_entity(args.name, args.entity_type or "", args.description or "")
    elif act == "edit":
        if args.clear:
            await rag.clear_entity_edits(args.name, args.clear)
        if args.description is not None or args.entity_type is not None:
            await rag.edit_entity(
                args.name, description=args.description, entity_type=args.entity_type
            )
    elif act == "delete":
        await rag.delete_entity(args.name)
    else:
        await rag.restore_entity(args.name)
    return {_DONE[act]: args.name}


async def _relation(rag: KGRag, args: argparse.Namespace) -> Done:
    act, src, tgt = args.action, args.source, args.target
    if act == "create":
        await rag.create_relation(
            src,
            tgt,
            description=args.description or "",
            keywords=args.keywords or "",
            weight=1.0 if args.weight is None else args.weight,
        )
    elif act == "edit":
        await rag.edit_relation(
            src, tgt, description=args.description, keywords=args.keywords, weight=args.weight
        )
    elif act == "delete":
        await rag.delete_relation(src, tgt)
    else:
        await rag.restore_relation(src, tgt)
    return {_DONE[act]: [src, tgt]}


async def _split(rag: KGRag, args: argparse.Namespace) -> Done | Rows:
    if args.command == "splits":
        return await rag.splits()
    if args.command == "unsplit":
        await rag.unsplit(args.split_id)
        return {"unsplit": args.split_id}
    parts: dict[str, list[str]] = {}
    for new, chunks in args.part:
        if new in parts:
            raise CurationError(f"--part {new!r} is given twice")
        parts[new] = chunks
    sid = await rag.split_entity(args.name, parts)
    return {"split": args.name, "into": sorted(parts), "split_id": sid}


_DONE = {"create": "created", "edit": "edited", "delete": "deleted", "restore": "restored"}


def _print_merges(rows: Rows, as_json: bool) -> None:
    if as_json:
        print(json.dumps(rows, ensure_ascii=False))
        return
    for r in rows:
        print(f"{r['id']}  {r['origin']:<8} {r['target']} <- {', '.join(r['sources'])}")
    print(f"{len(rows)} merge(s)")


def _print_splits(rows: Rows, as_json: bool) -> None:
    if as_json:
        print(json.dumps(rows, ensure_ascii=False))
        return
    for r in rows:
        parts = "; ".join(f"{new} <- {', '.join(ids)}" for new, ids in sorted(r["parts"].items()))
        print(f"{r['id']}  {r['name']}: {parts}")
    print(f"{len(rows)} split(s)")
