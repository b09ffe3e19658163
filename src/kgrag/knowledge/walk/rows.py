"""Reading the walk graph's rows from a store: all of them, or those a change touched.

The rows (:class:`~kgrag.knowledge.walk.graph.Rows`) are each entity's ``source_ids``,
the edges touching it with their weights, and the live chunk ids; the
entity–chunk similarities are computed from the stored vectors for the
pairs that need them (:func:`fill_sims`), in batches of entities, so a
full build holds the chunk vectors and one batch of entity vectors at a
time and a patch reads only the vectors of the entities it touched.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from kgrag.ingest.ids import entity_vector_id
from kgrag.knowledge.fields import as_list
from kgrag.knowledge.walk.graph import Rows, WalkGraph, assemble
from kgrag.storage.base import edge_weight
from kgrag.storage.layout import CHUNK_VECTORS, CHUNKS, ENTITY_VECTORS

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

# Entities read (nodes, vectors) per batch.
BATCH = 5000


async def read_all(storage: Storage) -> Rows:
    """Every entity's sources and every edge and chunk of ``storage``."""
    graph = storage.graph
    names = list(await graph.all_node_names())
    sources: list[list[str]] = []
    for lo in range(0, len(names), BATCH):
        part = names[lo : lo + BATCH]
        nodes = await graph.get_nodes(part)
        sources.extend(as_list((nodes.get(n) or {}).get("source_ids")) for n in part)
    chunks = list(await storage.kv(CHUNKS).keys())
    return Rows(names, sources, list(await graph.all_edges()), chunks=chunks)


async def read_touched(storage: Storage, names: Iterable[str], chunks: Iterable[str]) -> Rows:
    """The rows of ``names`` and ``chunks`` as stored now (the missing ones in ``gone``)."""
    graph, wanted = storage.graph, sorted(set(names))
    nodes = await graph.get_nodes(wanted)
    present = [n for n in wanted if n in nodes]
    keys = await graph.node_edges(present)
    pairs = sorted({pair for found in keys.values() for pair in found})
    edges = await graph.get_edges(pairs)
    ids = sorted(set(chunks))
    missing = await storage.kv(CHUNKS).missing(ids)
    return Rows(
        present,
        [as_list(nodes[n].get("source_ids")) for n in present],
        [(a, b, edge_weight(d)) for (a, b), d in edges.items()],
        set(wanted) - set(present),
        [c for c in ids if c not in missing],
        missing,
    )


async def build(storage: Storage, version: int) -> WalkGraph:
    """The walk graph of everything ``storage`` holds, labelled ``version``."""
    graph = assemble(version, await read_all(storage))
    await fill_sims(storage, graph, np.ones(len(graph.ec), dtype=bool))
    return graph


async def fill_sims(storage: Storage, graph: WalkGraph, mask: np.ndarray) -> None:
    """Set ``graph.sim`` of the ``ec`` rows in ``mask`` from the stored vectors (0 if missing)."""
    rows = np.flatnonzero(mask)
    if not len(rows):
        return
    graph.sim[rows] = 0.0
    chunk_ids = np.unique(graph.ec[rows, 1])
    found = await storage.vectors(CHUNK_VECTORS).get_vectors([graph.chunks[j] for j in chunk_ids])
    dim = _dim(found.values())
    if not dim:
        return
    chunk_mat = _matrix([found.get(graph.chunks[j]) for j in chunk_ids], dim)
    del found
    entities = np.unique(graph.ec[rows, 0])
    store = storage.vectors(ENTITY_VECTORS)
    for lo in range(0, len(entities), BATCH):
        part = entities[lo : lo + BATCH]
        ids = [entity_vector_id(graph.entities[i]) for i in part]
        got = await store.get_vectors(ids)
        ent_mat = _matrix([got.get(i) for i in ids], dim)
        mine = rows[np.isin(graph.ec[rows, 0], part)]
        e_pos = np.searchsorted(part, graph.ec[mine, 0])
        c_pos = np.searchsorted(chunk_ids, graph.ec[mine, 1])
        graph.sim[mine] = np.einsum("ij,ij->i", ent_mat[e_pos], chunk_mat[c_pos])


def _dim(vectors: Iterable[np.ndarray]) -> int:
    return next((len(v) for v in vectors), 0)


def _matrix(rows: list[np.ndarray | None], dim: int) -> np.ndarray:
    """``rows`` as a float32 matrix; missing or other-sized vectors are zero rows."""
    out = np.zeros((len(rows), dim), np.float32)
    for i, v in enumerate(rows):
        if v is not None and len(v) == dim:
            out[i] = v
    return out
