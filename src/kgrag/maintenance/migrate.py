"""Copying a whole index from one storage backend to another, resumably.

``migrate(source, target)`` copies every part of an opened index into
another opened store (SQLite to PostgreSQL, back, or SQLite to SQLite)
without calling any model: every key-value namespace (chunk texts,
extractions, the LLM cache, ...), every vector namespace as stored, the
graph's nodes and edges, the document status records, the lexical index
(re-added from the chunk texts, since each backend keeps its own token
form) and the meta values. :mod:`kgrag.maintenance.migrate_steps` lists the
steps; each runs in batches of its sorted keys.

Resuming: each batch is written in one target transaction together with
the progress record (meta ``migration``: the source, its counts when the
copy began, the finished steps, the step under way and the last key it
copied). Run again after a crash or Ctrl-C, the copy continues after the
last committed batch; run again after it finished, it only checks the
counts. A target holding anything else (another index, or a copy of
another source) is refused unless ``overwrite`` empties it first; a
source that changed since its interrupted copy began is refused too.

Both writer leases are held for the whole run (the source's so that
nobody changes it meanwhile), taken in the order of their labels so two
opposite migrations cannot deadlock. At the end the counts per role are
compared; ``verify`` also compares the canonical exports
(:mod:`kgrag.maintenance.export`) byte for byte.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kgrag.errors import ConfigError, StorageError
from kgrag.maintenance import migrate_steps as steps
from kgrag.maintenance.export import dumps, export_graph

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

RECORD_VERSION = 1


@dataclass(frozen=True, slots=True)
class Batch:
    """One committed batch: its step, its first and last key, progress in the step."""

    step: str
    first: str
    last: str
    size: int
    done: int  # keys of the step copied so far (this run and earlier ones)
    total: int


@dataclass(frozen=True, slots=True)
class MigrateOptions:
    """How to migrate: batch size, emptying a foreign target, checks, callbacks."""

    batch_size: int = 1000
    overwrite: bool = False  # empty a target that holds another index first
    verify: bool = False  # also compare the canonical exports of both sides
    wait: bool = True  # wait for a busy writer lease instead of failing
    on_wait: Callable[[str], None] | None = None
    on_batch: Callable[[Batch], None] | None = None  # after each committed batch


@dataclass(slots=True)
class MigrationReport:
    """What a run did: counts per role on both sides, what it copied, how long it took."""

    source: str
    target: str
    source_counts: dict[str, int]
    target_counts: dict[str, int]
    copied: dict[str, int] = field(default_factory=dict)  # keys copied by this run, per step
    batches: int = 0
    seconds: float = 0.0
    resumed: bool = False  # continued an interrupted run
    already_done: bool = False  # an earlier run had finished: nothing copied
    exports_equal: bool | None = None  # None: not compared (no ``verify``)

    @property
    def mismatches(self) -> list[str]:
        """``role: source N, target M`` for each role whose counts differ."""
        src, dst = self.source_counts, self.target_counts
        roles = sorted(src.keys() | dst.keys())
        if "lexical" not in src or "lexical" not in dst:  # one side keeps no lexical index
            roles = [r for r in roles if r != "lexical"]
        return [
            f"{r}: source {src.get(r, 0)}, target {dst.get(r, 0)}"
            for r in roles
            if src.get(r, 0) != dst.get(r, 0)
        ]

    @property
    def ok(self) -> bool:
        return not self.mismatches and self.exports_equal is not False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"mismatches": self.mismatches, "ok": self.ok}


@dataclass(frozen=True, slots=True)
class Progress:
    """The target's progress record (meta ``migration``)."""

    source: str
    source_counts: dict[str, int]
    done: tuple[str, ...] = ()
    step: str | None = None
    after: str | None = None  # last key of ``step`` copied
    finished: bool = False

    def record(self) -> dict[str, Any]:
        return {"version": RECORD_VERSION, **asdict(self), "done": list(self.done)}

    @classmethod
    def of(cls, record: dict[str, Any]) -> Progress:
        return cls(
            source=str(record.get("source")),
            source_counts=dict(record.get("source_counts") or {}),
            done=tuple(record.get("done") or ()),
            step=record.get("step"),
            after=record.get("after"),
            finished=bool(record.get("finished")),
        )

    def started(self) -> bool:
        return bool(self.done or self.step)

    def cursor(self, step: str) -> str | None:
        return self.after if self.step == step else None


def storage_label(storage: Storage) -> str:
    """How a store names itself in reports and progress records (no password)."""
    return storage.label


async def migrate(
    source: Storage, target: Storage, options: MigrateOptions | None = None
) -> MigrationReport:
    """Copy the whole index ``source`` into ``target`` (both open); see the module docstring."""
    options = options or MigrateOptions()
    if options.batch_size < 1:
        raise ConfigError(f"the batch size must be at least 1, not {options.batch_size}")
    began = time.monotonic()
    src, dst = storage_label(source), storage_label(target)
    if src == dst:
        raise ConfigError(f"the source and the target are the same index: {src}")
    async with _leases([(src, source), (dst, target)], options):
        counts = await steps.count_roles(source)
        progress = await _start(target, Progress(src, counts), options, dst)
        report = MigrationReport(src, dst, counts, {}, resumed=progress.started())
        report.already_done = progress.finished
        if not progress.finished:
            await _Run(source, target, options, report).copy(progress)
        report.target_counts = await steps.count_roles(target)
        report.target_counts["meta"] = await steps.meta_matching(source, target)
        if options.verify:
            report.exports_equal = await same_export(source, target)
    report.seconds = time.monotonic() - began
    return report


@asynccontextmanager
async def _leases(
    stores: list[tuple[str, Storage]], options: MigrateOptions
) -> AsyncIterator[None]:
    (_, first), (_, second) = sorted(stores, key=lambda pair: pair[0])
    wait, on_wait = options.wait, options.on_wait
    async with first.writer(wait=wait, on_wait=on_wait), second.writer(wait=wait, on_wait=on_wait):
        yield


async def _start(target: Storage, fresh: Progress, options: MigrateOptions, label: str) -> Progress:
    """The progress to continue from: the target's own record, or a new one."""
    stored = await target.get_meta(steps.MIGRATION_KEY)
    if isinstance(stored, dict) and stored.get("source") == fresh.source and not options.overwrite:
        progress = Progress.of(stored)
        if progress.source_counts != fresh.source_counts:
            since = (
                f"it was copied into {label}"
                if progress.finished
                else f"its copy into {label} began"
            )
            raise StorageError(
                f"{fresh.source} changed since {since}; run again with --overwrite to copy it afresh"
            )
        return progress
    if not options.overwrite and (stored is not None or await steps.holds_anything(target)):
        raise ConfigError(
            f"{label} already holds an index that was not migrated from {fresh.source}; "
            "choose an empty target, or pass --overwrite to delete what it holds"
        )
    async with target.transaction():
        if options.overwrite:
            await steps.empty(target)
        await target.set_meta(steps.MIGRATION_KEY, fresh.record())
    return fresh


@dataclass(slots=True)
class _Run:
    """One run's two stores, its options and the report it fills in."""

    source: Storage
    target: Storage
    options: MigrateOptions
    report: MigrationReport

    async def copy(self, progress: Progress) -> None:
        """Run every step not finished yet, then mark the migration finished."""
        for step in await steps.plan(self.source, self.target):
            if step.name in progress.done:
                continue
            progress = await self.copy_step(step, progress)
            progress = replace(progress, done=(*progress.done, step.name), step=None, after=None)
            await self.target.set_meta(steps.MIGRATION_KEY, progress.record())
        await self.target.set_meta(steps.MIGRATION_KEY, replace(progress, finished=True).record())

    async def copy_step(self, step: steps.Step, progress: Progress) -> Progress:
        """Copy one step's keys after its cursor, one committed batch at a time."""
        keys, size, report = await step.keys(self.source), self.options.batch_size, self.report
        cursor = progress.cursor(step.name)
        report.copied.setdefault(step.name, 0)
        for at in range(0 if cursor is None else bisect_right(keys, cursor), len(keys), size):
            part = keys[at : at + size]
            payload = await step.read(self.source, part)
            progress = replace(progress, step=step.name, after=part[-1])
            async with self.target.transaction():
                await step.write(self.target, payload)
                await self.target.set_meta(steps.MIGRATION_KEY, progress.record())
            report.copied[step.name] += len(part)
            report.batches += 1
            if self.options.on_batch is not None:
                done = at + len(part)
                self.options.on_batch(
                    Batch(step.name, part[0], part[-1], len(part), done, len(keys))
                )
        return progress


async def same_export(one: Storage, two: Storage) -> bool:
    """Whether both stores give the same canonical export (timestamps included)."""
    return dumps(await export_graph(one)) == dumps(await export_graph(two))
