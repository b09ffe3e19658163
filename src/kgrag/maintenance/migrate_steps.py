"""What a migration copies, role by role: the steps, the counts, and emptying a target.

A :class:`Step` names one part of an index (one key-value namespace, one
vector namespace, the graph's nodes, its edges, the document status, the
lexical index, the meta keys) and knows three things about it: its keys
on the source (sorted, so a batch cursor is the last key copied), how to
read a batch of them from the source and how to write that batch to the
target. :mod:`kgrag.maintenance.migrate` drives them.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from kgrag.storage.layout import CHUNKS, MAX_SEQ_META, MIGRATION_META, SCHEMA_VERSION_META
from kgrag.types import DocRecord, DocStatus

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

MIGRATION_KEY = MIGRATION_META  # the target's progress record
NOT_COPIED = frozenset({SCHEMA_VERSION_META, MIGRATION_KEY})  # meta each store keeps for itself
# emptying a target leaves these too: the document store's high-water mark of
# enqueue numbers (read as a number; a stale larger one only skips numbers)
_KEPT = NOT_COPIED | {MAX_SEQ_META}


Row = dict[str, object]  # a stored JSON object, copied as it is
Keys = Callable[["Storage"], Awaitable[list[str]]]
Write = Callable[["Storage"], Awaitable[None]]  # a batch read from the source, to write to a target
B = TypeVar("B")  # what one step reads and writes


@dataclass(frozen=True, slots=True)
class Step:
    """One part of an index, copied in batches of its sorted keys."""

    name: str
    keys: Keys
    read: Callable[[Storage, list[str]], Awaitable[Write]]

    async def write(self, target: Storage, batch: Write) -> None:
        await batch(target)


def _step(
    name: str,
    keys: Keys,
    read: Callable[[Storage, list[str]], Awaitable[B]],
    write: Callable[[Storage, B], Awaitable[None]],
) -> Step:
    """The step reading batches with ``read`` and writing them with ``write``."""

    async def read_batch(s: Storage, part: list[str]) -> Write:
        batch = await read(s, part)

        async def write_batch(t: Storage) -> None:
            await write(t, batch)

        return write_batch

    return Step(name, keys, read_batch)


async def plan(source: Storage, target: Storage) -> list[Step]:
    """The steps of copying ``source`` to ``target``, in the order they run."""
    steps = [_kv_step(ns) for ns in await source.kv_namespaces()]
    steps += [_vector_step(ns) for ns in await source.vector_namespaces()]
    steps += [_step("graph.nodes", _node_keys, _read_nodes, _write_nodes)]
    steps += [_step("graph.edges", _edge_keys, _read_edges, _write_edges)]
    steps += [_step("doc_status", _doc_keys, _read_docs, _write_docs)]
    if source.lexical is not None and target.lexical is not None:
        steps += [_step("lexical", _lexical_keys, _read_texts, _write_texts)]
    steps += [_step("meta", meta_keys, _read_meta, _write_meta)]
    return steps


# -- key-value and vector namespaces ---------------------------------------------


def _kv_step(ns: str) -> Step:
    async def keys(s: Storage) -> list[str]:
        return sorted(await s.kv(ns).keys())

    async def read(s: Storage, part: list[str]) -> dict[str, Row]:
        values = await s.kv(ns).get_many(part)
        return {k: v for k, v in zip(part, values, strict=True) if v is not None}

    async def write(t: Storage, items: dict[str, Row]) -> None:
        await t.kv(ns).upsert(items)

    return _step(f"kv:{ns}", keys, read, write)


Vectors = tuple[list[str], np.ndarray, list[Row]]  # ids, their vectors (stacked), metadata


def _vector_step(ns: str) -> Step:
    async def keys(s: Storage) -> list[str]:
        return sorted(await s.vectors(ns).ids())

    async def read(s: Storage, part: list[str]) -> Vectors:
        vectors = await s.vectors(ns).get_vectors(part)
        metas = await s.vectors(ns).get_metas(part)
        ids = [i for i in part if i in vectors]
        rows = np.stack([vectors[i] for i in ids]) if ids else np.zeros((0, 0), np.float32)
        return ids, rows, [metas.get(i, {}) for i in ids]

    async def write(t: Storage, batch: Vectors) -> None:
        ids, rows, metas = batch
        if ids:
            await t.vectors(ns).upsert(ids, rows, metas)

    return _step(f"vectors:{ns}", keys, read, write)


# -- graph -----------------------------------------------------------------------


async def _node_keys(s: Storage) -> list[str]:
    return sorted(await s.graph.all_node_names())


async def _read_nodes(s: Storage, part: list[str]) -> dict[str, Row]:
    return await s.graph.get_nodes(part)


async def _write_nodes(t: Storage, nodes: dict[str, Row]) -> None:
    await t.graph.upsert_nodes(nodes)


def _pair_key(a: str, b: str) -> str:
    return json.dumps([a, b], ensure_ascii=False)


async def _edge_keys(s: Storage) -> list[str]:
    return sorted(_pair_key(a, b) for a, b, _ in await s.graph.all_edges())


def _pair(key: str) -> tuple[str, str]:
    a, b = json.loads(key)
    return (a, b)


async def _read_edges(s: Storage, part: list[str]) -> dict[tuple[str, str], Row]:
    return await s.graph.get_edges([_pair(key) for key in part])


async def _write_edges(t: Storage, edges: dict[tuple[str, str], Row]) -> None:
    await t.graph.upsert_edges(edges)


# -- document status, lexical index, meta ----------------------------------------


async def _doc_keys(s: Storage) -> list[str]:
    return sorted(r.id for r in await s.doc_status.by_status(*DocStatus))


async def _read_docs(s: Storage, part: list[str]) -> list[DocRecord]:
    found = await s.doc_status.get_many(part)
    return [found[i] for i in part if i in found]


async def _write_docs(t: Storage, records: list[DocRecord]) -> None:
    await t.doc_status.upsert(records)


async def _lexical_keys(s: Storage) -> list[str]:
    assert s.lexical is not None  # plan() adds the step only then
    return sorted(await s.lexical.ids())


async def _read_texts(s: Storage, part: list[str]) -> dict[str, str]:
    """Each indexed chunk's text (field ``content`` of the chunk texts namespace)."""
    rows = await s.kv(CHUNKS).get_many(part)
    return {i: str(row["content"]) for i, row in zip(part, rows, strict=True) if row}


async def _write_texts(t: Storage, texts: dict[str, str]) -> None:
    assert t.lexical is not None
    await t.lexical.add(texts)


async def meta_keys(s: Storage) -> list[str]:
    """The meta keys a migration copies (every one but the stores' own)."""
    return [k for k in await s.meta_keys() if k not in NOT_COPIED]


async def _read_meta(s: Storage, part: list[str]) -> dict[str, object]:
    return {k: await s.get_meta(k) for k in part}


async def _write_meta(t: Storage, values: dict[str, object]) -> None:
    for key, value in values.items():
        await t.set_meta(key, value)


# -- counts and emptying ---------------------------------------------------------


async def count_roles(s: Storage) -> dict[str, int]:
    """Rows per role: ``kv:<ns>``, ``vectors:<ns>``, graph, documents, lexical, meta."""
    out = {f"kv:{ns}": await s.kv(ns).count() for ns in await s.kv_namespaces()}
    for ns in await s.vector_namespaces():
        out[f"vectors:{ns}"] = await s.vectors(ns).count()
    out["graph.nodes"] = await s.graph.node_count()
    out["graph.edges"] = await s.graph.edge_count()
    out["doc_status"] = sum((await s.doc_status.counts()).values())
    if s.lexical is not None:
        out["lexical"] = await s.lexical.count()
    out["meta"] = len(await _meta_values(s))
    return out


async def _meta_values(s: Storage) -> dict[str, object]:
    values = await _read_meta(s, await meta_keys(s))
    return {k: v for k, v in values.items() if v is not None}


async def meta_matching(source: Storage, target: Storage) -> int:
    """How many of the source's meta values the target holds equal."""
    wanted = await _meta_values(source)
    have = await _read_meta(target, sorted(wanted))
    return sum(1 for k, v in wanted.items() if have[k] == v)


async def holds_anything(s: Storage) -> bool:
    """Whether ``s`` holds any row of any role (or a meta value of its user)."""
    return any(n > 0 for n in (await count_roles(s)).values())


async def empty(t: Storage) -> None:
    """Delete every row of every role of ``t``; its meta values become ``None`` (absent)."""
    for ns in await t.kv_namespaces():
        await t.kv(ns).delete(await t.kv(ns).keys())
    for ns in await t.vector_namespaces():
        await t.vectors(ns).delete(await t.vectors(ns).ids())
    await t.graph.delete_edges([(a, b) for a, b, _ in await t.graph.all_edges()])
    await t.graph.delete_nodes(await t.graph.all_node_names())
    await t.doc_status.delete([r.id for r in await t.doc_status.by_status(*DocStatus)])
    if t.lexical is not None:
        await t.lexical.delete(await t.lexical.ids())
    for key in await t.meta_keys():
        if key not in _KEPT:
            await t.set_meta(key, None)
