"""``kgrag migrate``: copy a whole index to another storage backend, without any model call.

    kgrag migrate --from SRC --to DST [--workspace NAME] [--overwrite] [--verify]
                  [--batch-size N] [--no-wait] [--no-progress] [--json]

SRC and DST are ``sqlite:PATH`` (a working directory) or ``postgres:DSN``
(any libpq connection string or URI; the workspace is ``--workspace``,
``postgres:DSN#WORKSPACE``, or else the SQLite side's folder name). An
interrupted run continues when run again; see :mod:`kgrag.maintenance.migrate`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kgrag.cli.index_cmd import waiting_message
from kgrag.cli.opening import FAILED, OK
from kgrag.errors import ConfigError, NoIndexError
from kgrag.maintenance.migrate import Batch, MigrateOptions, MigrationReport, migrate
from kgrag.maintenance.migrate_steps import holds_anything
from kgrag.storage.capabilities import Capability, feature, supports

if TYPE_CHECKING:
    from kgrag.cli.args import AddFlags, Subcommands
    from kgrag.config.settings import Settings
    from kgrag.storage.base import Storage

_URI_PREFIXES = ("postgres://", "postgresql://")
_WORKSPACE_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789_")


@dataclass(frozen=True, slots=True)
class Spec:
    """One side of a migration as the command line names it."""

    backend: str  # "sqlite" or "postgres"
    where: str  # the working directory, or the DSN
    workspace: str | None = None  # postgres: from ``DSN#WORKSPACE``


def add_parser(sub: Subcommands, writer: AddFlags) -> None:
    p = sub.add_parser(
        "migrate",
        help="copy a whole index to another storage backend (sqlite, postgres), resumably",
    )
    p.add_argument(
        "--from",
        dest="source",
        required=True,
        metavar="SRC",
        help="sqlite:PATH (a working directory) or postgres:DSN[#WORKSPACE]",
    )
    p.add_argument(
        "--to",
        dest="target",
        required=True,
        metavar="DST",
        help="sqlite:PATH or postgres:DSN[#WORKSPACE]",
    )
    p.add_argument(
        "--workspace",
        metavar="NAME",
        help="the postgres workspace (default: the sqlite side's folder name)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="delete what the target holds first (refused without it)",
    )
    p.add_argument(
        "--verify", action="store_true", help="also compare the canonical exports of both sides"
    )
    p.add_argument(
        "--batch-size",
        type=int,
        default=1000,
        metavar="N",
        help="keys per committed batch (default: 1000)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON line instead of text")
    writer(p)


def parse_spec(text: str) -> Spec:
    """``sqlite:PATH``, ``postgres:DSN`` or ``postgres:DSN#WORKSPACE``."""
    kind, sep, rest = text.partition(":")
    if text.startswith(_URI_PREFIXES):
        kind, rest = "postgres", text
    elif not sep or not rest or kind not in ("sqlite", "postgres"):
        raise ConfigError(f"{text!r} names no store: write sqlite:PATH or postgres:DSN[#WORKSPACE]")
    if kind == "sqlite":
        return Spec("sqlite", rest)
    dsn, hash_, name = rest.rpartition("#")
    if hash_ and name and set(name) <= _WORKSPACE_CHARS:
        return Spec("postgres", dsn, name)
    return Spec("postgres", rest)


def _build(spec: Spec, other: Spec, workspace: str | None) -> Storage:
    """The (not yet opened) store ``spec`` names."""
    from kgrag.storage.registry import open_storage

    if spec.backend == "sqlite":
        return open_storage("sqlite", Path(spec.where))
    from kgrag.storage.postgres import workspace_name

    beside = Path(other.where) if other.backend == "sqlite" else None
    name = (
        spec.workspace or workspace or (workspace_name(beside.resolve().name) if beside else None)
    )
    if name is None:
        raise ConfigError("name the postgres workspace: --workspace NAME or postgres:DSN#NAME")
    # vectors are copied without their HNSW index, which is built once at the end (run)
    return open_storage(
        "postgres",
        beside or Path.cwd(),
        dsn=spec.where,
        workspace=name,
        defer_vector_index=True,
    )


@asynccontextmanager
async def _opened(args: argparse.Namespace) -> AsyncIterator[tuple[Storage, Storage]]:
    src, dst = parse_spec(args.source), parse_spec(args.target)
    source, target = _build(src, dst, args.workspace), _build(dst, src, args.workspace)
    if src.backend == "sqlite" and not await source.exists():
        raise NoIndexError(src.where)
    await source.open()
    try:
        await target.open()
        try:
            if not await holds_anything(source):
                raise ConfigError(f"{args.source} holds no index: nothing to migrate")
            yield source, target
        finally:
            await target.close()
    finally:
        await source.close()


def _progress(batch: Batch) -> None:
    end = "\n" if batch.done == batch.total else ""
    print(f"\rmigrating {batch.step}: {batch.done}/{batch.total}", end=end, file=sys.stderr)


async def run(args: argparse.Namespace, settings: Settings) -> int:
    """Migrate, print the report; exit 1 when the two sides' counts differ."""
    options = MigrateOptions(
        batch_size=args.batch_size,
        overwrite=args.overwrite,
        verify=args.verify,
        wait=not args.no_wait,
        on_wait=waiting_message,
        on_batch=None if args.no_progress or not sys.stderr.isatty() else _progress,
    )
    async with _opened(args) as (source, target):
        report = await migrate(source, target, options)
        if supports(target, Capability.VECTOR_INDEX_BUILD):
            # also after a resumed or finished run: builds what is missing
            await feature(target, Capability.VECTOR_INDEX_BUILD).build_vector_indexes()
    print(json.dumps(report.to_dict(), ensure_ascii=False) if args.json else render(report))
    return OK if report.ok else FAILED


def render(report: MigrationReport) -> str:
    """The report as text: what happened, then the counts per role on both sides."""
    if report.already_done:
        head = f"already migrated: {report.source} -> {report.target}; nothing copied"
    else:
        how = "resumed, " if report.resumed else ""
        copied = sum(report.copied.values())
        head = (
            f"migrated {report.source} -> {report.target} ({how}{copied} keys "
            f"in {report.batches} batches, {report.seconds:.1f} s)"
        )
    src, dst = report.source_counts, report.target_counts
    width = max(map(len, src.keys() | dst.keys() | {"role"}))
    lines = [head, f"  {'role':<{width}}  {'source':>9}  {'target':>9}"]
    for role in sorted(src.keys() | dst.keys()):
        lines.append(f"  {role:<{width}}  {src.get(role, '-'):>9}  {dst.get(role, '-'):>9}")
    lines.append(_verdict(report))
    return "\n".join(lines)


def _verdict(report: MigrationReport) -> str:
    if report.mismatches:
        return "counts differ: " + "; ".join(report.mismatches)
    if report.exports_equal is False:
        return "counts equal, but the canonical exports differ"
    checked = "; canonical exports equal" if report.exports_equal else ""
    return f"counts equal on both sides{checked}"
