"""Recompute what is derived: the search stores (``repair``) or the whole graph (``rebuild``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import numpy as np

from kgrag.indexing.replay import replay_curation as replay
from kgrag.indexing.vectors import entity_text, relation_text
from kgrag.ingest.ids import entity_vector_id, relation_vector_id
from kgrag.knowledge.walk import store as walk_store
from kgrag.storage.layout import (
    CHUNK_VECTORS,
    CHUNKS,
    DOC_GRAPH,
    ENTITY_VECTORS,
    FACTS,
    RELATION_VECTORS,
    SUPPORT,
    WALK,
)
from kgrag.storage.layout.rows import ChunkRow
from kgrag.storage.layout.typed import TypedKV
from kgrag.types import DocStatus

if TYPE_CHECKING:
    from kgrag.indexing.changes import ChangeApplier
    from kgrag.storage.base import Storage

Embed = Callable[[list[str]], Awaitable[np.ndarray]]
Meta = dict[str, str | None]  # the metadata kept beside a vector (storage.layout.rows)


async def _sync_namespace(
    storage: Storage, ns: str, wanted: dict[str, tuple[str, Meta]], embed: Embed
) -> int:
    """Delete orphan vectors of ``ns`` and embed the missing ones; returns rows changed."""
    store = storage.vectors(ns)
    have = set(await store.ids())
    orphans = sorted(have - wanted.keys())
    missing = sorted(wanted.keys() - have)
    if orphans:
        await store.delete(orphans)
    if missing:
        vectors = await embed([wanted[i][0] for i in missing])
        await store.upsert(missing, vectors, [wanted[i][1] for i in missing])
    return len(orphans) + len(missing)


async def _wanted(storage: Storage) -> dict[str, dict[str, tuple[str, Meta]]]:
    g = storage.graph
    names = await g.all_node_names()
    nodes = await g.get_nodes(names)
    pairs = [(a, b) for a, b, _ in await g.all_edges()]
    edges = await g.get_edges(pairs)
    kv = TypedKV(storage.kv(CHUNKS), ChunkRow)
    ids = sorted(await kv.keys())
    rows = dict(zip(ids, await kv.get_many(ids), strict=False))
    return {
        ENTITY_VECTORS: {
            entity_vector_id(n): (entity_text(n, d, d.get("extractor") == "nlp"), {"name": n})
            for n, d in nodes.items()
        },
        RELATION_VECTORS: {
            relation_vector_id(*k): (
                relation_text(k, d, d.get("extractor") == "nlp"),
                {"src": k[0], "tgt": k[1]},
            )
            for k, d in edges.items()
        },
        CHUNK_VECTORS: {
            c: (r["content"], {"doc_id": r.get("doc_id"), "file_path": r.get("file_path")})
            for c, r in rows.items()
            if r is not None
        },
    }


async def repair(storage: Storage, embed: Embed) -> dict[str, int]:
    """Rebuild vectors, the lexical index and the walk graph from the graph and the chunks."""
    wanted = await _wanted(storage)
    changed = {ns: await _sync_namespace(storage, ns, w, embed) for ns, w in wanted.items()}
    lex = storage.lexical
    if lex is not None:
        chunks = {c: text for c, (text, _) in wanted[CHUNK_VECTORS].items()}
        have = set(await lex.ids())
        await lex.delete(sorted(have - chunks.keys()))
        todo = {c: chunks[c] for c in sorted(chunks.keys() - have)}
        await lex.add(todo)
        changed["lexical"] = len(have - chunks.keys()) + len(todo)
    changed[WALK] = await _repair_walk(storage)
    return changed


async def _repair_walk(storage: Storage) -> int:
    """Store a fresh walk graph if the stored one is missing or differs; 1 if it was rewritten."""
    if await walk_store.read_head(storage) is not None and not await walk_store.verify(storage):
        return 0
    async with storage.transaction():
        await walk_store.rewrite(storage)
    return 1


async def _clear_namespace(storage: Storage, ns: str) -> None:
    kv = storage.kv(ns)
    await kv.delete(await kv.keys())


async def _disown_facts(storage: Storage) -> None:
    """Keep every chunk's stored extraction but forget its owners."""
    kv = storage.kv(FACTS)
    keys = await kv.keys()
    rows = await kv.get_many(keys)
    await kv.upsert(
        {k: {**r, "owners": {}} for k, r in zip(keys, rows, strict=False) if r is not None}
    )


async def drop_unowned_facts(storage: Storage) -> int:
    """Delete stored extractions of chunks no document owns (after a rebuild)."""
    kv = storage.kv(FACTS)
    keys = await kv.keys()
    rows = await kv.get_many(keys)
    dead = [k for k, r in zip(keys, rows, strict=False) if r is not None and not r.get("owners")]
    await kv.delete(dead)
    return len(dead)


async def reset_graph(storage: Storage) -> int:
    """Drop the graph and its derived records, and queue every processed document again.

    One transaction; chunk vectors and the chunks' stored extractions stay
    (the rebuild reuses them: no extraction call, no embedding of a
    chunk); an index made before extractions were stored gets its
    extractions from the LLM cache. Returns the documents queued.
    """
    g = storage.graph
    names = await g.all_node_names()
    pairs = [(a, b) for a, b, _ in await g.all_edges()]
    records = await storage.doc_status.by_status(DocStatus.PROCESSED)
    async with storage.transaction():
        await g.delete_edges(pairs)
        await g.delete_nodes(names)
        await storage.vectors(ENTITY_VECTORS).delete([entity_vector_id(n) for n in names])
        await storage.vectors(RELATION_VECTORS).delete([relation_vector_id(*k) for k in pairs])
        for ns in (SUPPORT, DOC_GRAPH, CHUNKS):
            await _clear_namespace(storage, ns)
        await _disown_facts(storage)
        await walk_store.reset(storage)
        for r in records:
            r.status = DocStatus.PENDING
        await storage.doc_status.upsert(records)
    return len(records)


async def replay_curation(storage: Storage, applier: ChangeApplier) -> int:
    """After the documents are re-indexed: recompute every key a curation record mentions.

    The documents' commits already planned through the records (aliases,
    overrides, tombstones); this adds what no document touches (manual
    entities and relations). Returns the names recomputed.
    """
    return await replay(applier)
