"""The stored walk graph: a snapshot plus a log of what each commit touched.

The ``ppr`` mode walks a :class:`~kgrag.knowledge.walk.graph.WalkGraph`. Building one
reads every node, edge and vector (seconds at 100k entities), so the store
keeps it, in two kv namespaces written in the commit's own transaction:

- ``walk_graph``: ``snapshot``, the graph as of some graph version (encoded
  by :mod:`kgrag.knowledge.walk.codec`), and ``head``, that version, the
  entity count and how many names the log holds since;
- ``walk_log``: one entry per later version (key: the version, 12 digits),
  the entity names and chunk ids that commit touched.

Every commit calls :func:`record`, which bumps ``graph_version`` and appends
its entry; once the log names more than :func:`compact_after` keys the
commit writes a fresh snapshot instead and clears the log. A reader
(:class:`WalkReader`) decodes the snapshot once, then patches its graph
with the entries it has not seen, re-reading only the touched rows
(:func:`~kgrag.knowledge.walk.graph.patch`). Patching and building give the same
arrays; :func:`verify` (``kgrag check``) compares them, and
:func:`rewrite` (``repair``) stores a fresh build.

A store without a ``head`` (written before this existed, or by hand) has
no stored graph: readers build it in full, as often as its counts change,
until a commit, :func:`rewrite` or :func:`save` stores one. So does a log
with a version missing (a writer that did not log): the graph is built in
full until the next snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kgrag.knowledge.walk.codec import FORMAT, decode, encode
from kgrag.knowledge.walk.graph import WalkGraph, differences
from kgrag.knowledge.walk.patch import patch
from kgrag.knowledge.walk.rows import build, fill_sims, read_touched
from kgrag.storage.layout import (
    CHUNKS,
    GRAPH_VERSION_META,
    WALK,
    WALK_HEAD_KEY,
    WALK_LOG,
    WALK_SNAPSHOT_KEY,
    walk_log_key,
)
from kgrag.storage.layout.rows import WalkHeadRow, WalkLogRow, WalkSnapshotRow
from kgrag.storage.layout.typed import TypedKV, read_meta

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

# A snapshot is rewritten once the log names this many keys, or a 32nd of the entities.
COMPACT_MIN = 2000


def compact_after(entities: int) -> int:
    """Logged names after which a commit rewrites the snapshot."""
    return max(COMPACT_MIN, entities // 32)


async def graph_version(storage: Storage) -> int:
    """The version of the graph: bumped by every commit (:func:`record`)."""
    return await read_meta(storage, GRAPH_VERSION_META, int) or 0


@dataclass(slots=True)
class Head:
    """The snapshot's version, its entity count, and the names logged since."""

    version: int
    entities: int
    pending: int

    @classmethod
    def read(cls, value: WalkHeadRow | None) -> Head | None:
        if not value or value.get("format") != FORMAT:
            return None
        return cls(int(value["version"]), int(value["entities"]), int(value["pending"]))

    def value(self) -> WalkHeadRow:
        return {
            "format": FORMAT,
            "version": self.version,
            "entities": self.entities,
            "pending": self.pending,
        }


async def read_head(storage: Storage) -> Head | None:
    return Head.read(await TypedKV(storage.kv(WALK), WalkHeadRow).get(WALK_HEAD_KEY))


async def save(storage: Storage, graph: WalkGraph) -> None:
    """Store ``graph`` as the snapshot and clear the log up to its version."""
    kv, log = storage.kv(WALK), storage.kv(WALK_LOG)
    head = Head(graph.version, len(graph.entities), 0)
    await kv.upsert({WALK_SNAPSHOT_KEY: dict(encode(graph)), WALK_HEAD_KEY: dict(head.value())})
    await log.delete([k for k in await log.keys() if k <= walk_log_key(graph.version)])


async def reset(storage: Storage) -> None:
    """Forget the stored graph (the graph was dropped); the next commit stores a new one."""
    log = storage.kv(WALK_LOG)
    await storage.kv(WALK).delete([WALK_SNAPSHOT_KEY, WALK_HEAD_KEY])
    await log.delete(await log.keys())
    await storage.set_meta(GRAPH_VERSION_META, await graph_version(storage) + 1)


async def rewrite(storage: Storage) -> WalkGraph:
    """Build the walk graph from everything stored and save it."""
    graph = await build(storage, await graph_version(storage))
    await save(storage, graph)
    return graph


async def record(
    storage: Storage, keys: Iterable[str | tuple[str, str]], chunks: Iterable[str]
) -> int:
    """Note a commit (call it in the commit's transaction); returns the new graph version.

    ``keys`` are the entity names and relation keys the commit wrote or
    deleted (a relation's ends count as touched), ``chunks`` the chunk ids
    it added or removed.
    """
    version = await graph_version(storage) + 1
    await storage.set_meta(GRAPH_VERSION_META, version)
    names = sorted({n for k in keys for n in ((k,) if isinstance(k, str) else k)})
    ids = sorted(set(chunks))
    head = await read_head(storage)
    if head is None:
        await save(storage, await build(storage, version))
        return version
    head.pending += len(names) + len(ids)
    if head.pending > compact_after(head.entities):
        graph = await replay(storage, None, version, (names, ids))
        await save(storage, graph if graph is not None else await build(storage, version))
        return version
    await storage.kv(WALK_LOG).upsert({walk_log_key(version): {"names": names, "chunks": ids}})
    await TypedKV(storage.kv(WALK), WalkHeadRow).upsert({WALK_HEAD_KEY: head.value()})
    return version


async def replay(
    storage: Storage,
    have: WalkGraph | None,
    version: int,
    extra: tuple[list[str], list[str]] | None = None,
) -> WalkGraph | None:
    """The stored graph at ``version``: ``have`` (or the snapshot) patched with the log.

    ``extra`` (names, chunks) are patched in too (a commit not logged yet).
    ``None`` when the store keeps no graph or its log misses a version.
    """
    if have is None or have.version < ((await read_head(storage)) or Head(0, 0, 0)).version:
        have = decode(await TypedKV(storage.kv(WALK), WalkSnapshotRow).get(WALK_SNAPSHOT_KEY))
        if have is None:
            return None
    start = have.version
    if start >= version and extra is None:
        return have
    wanted = [walk_log_key(v) for v in range(start + 1, version + 1)]
    if extra is not None:
        wanted = wanted[:-1]  # the commit being recorded has no entry yet
    entries = await TypedKV(storage.kv(WALK_LOG), WalkLogRow).get_many(wanted)
    if any(e is None for e in entries):
        return None
    names: set[str] = set(extra[0]) if extra else set()
    chunks: set[str] = set(extra[1]) if extra else set()
    for entry in entries:
        assert entry is not None
        names.update(entry.get("names", []))
        chunks.update(entry.get("chunks", []))
    graph, missing = patch(have, max(version, start), await read_touched(storage, names, chunks))
    await fill_sims(storage, graph, missing)
    return graph


async def verify(storage: Storage) -> list[str]:
    """How the stored walk graph differs from one built afresh (empty if none is stored)."""
    head = await read_head(storage)
    if head is None:
        return []
    version = await graph_version(storage)
    stored = await replay(storage, None, version)
    if stored is None:
        return [f"walk graph: the log from version {head.version} to {version} is incomplete"]
    return differences(stored, await build(storage, version))


async def signature(storage: Storage) -> tuple[int, int, int, int]:
    """(graph version, nodes, edges, chunks): what a graph built in full is valid for."""
    g = storage.graph
    counts = (
        await graph_version(storage),
        await g.node_count(),
        await g.edge_count(),
        await storage.kv(CHUNKS).count(),
    )
    return counts


class WalkReader:
    """Follows the walk graph of one storage, reading as little as each change needs."""

    def __init__(self, storage: Storage):
        self.storage = storage
        self.graph: WalkGraph | None = None
        self._built_for: tuple[int, ...] | None = None  # set when built in full

    async def current(self) -> tuple[WalkGraph, bool]:
        """The graph as stored now, and whether it changed since the last call."""
        version = await graph_version(self.storage)
        if self.graph is not None:
            if self._built_for is None and self.graph.version == version:
                return self.graph, False
            if self._built_for is not None and self._built_for == await signature(self.storage):
                return self.graph, False
        graph = await replay(self.storage, self.graph if self._built_for is None else None, version)
        if graph is not None:
            changed = graph is not self.graph
            self.graph, self._built_for = graph, None
            return graph, changed
        sig = await signature(self.storage)  # no stored graph: build it, valid for these counts
        self.graph, self._built_for = await build(self.storage, version), sig
        return self.graph, True
