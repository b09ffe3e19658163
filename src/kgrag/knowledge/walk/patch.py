"""Replacing the rows of some entities and chunks in a walk graph.

A commit touches a few names in a graph of many, so a patch keeps the
untouched rows where they are: the old and new name lists are both sorted,
so a kept entity's new index is its old one, less the names dropped before
it, plus the names added before it (numpy over the whole graph, ``bisect``
for the touched names only). Renumbering by an increasing map keeps the
kept pairs and edges sorted; the touched ones are inserted among them.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

import numpy as np

from kgrag.knowledge.walk.graph import Edge, Rows, WalkGraph, alt_key, name_key


def patch(old: WalkGraph, version: int, rows: Rows) -> tuple[WalkGraph, np.ndarray]:
    """``old`` with the entities of ``rows`` (and the chunks it adds or removes) replaced.

    Every pair and edge touching one of ``rows.names`` or ``rows.gone`` is
    dropped and read again from ``rows``, which must name every entity whose
    sources or edges changed, or that cites a chunk that appeared (a commit
    touches the names its chunks' facts give). Returns the new graph and the
    mask of its ``ec`` rows whose similarity is still to be computed.
    """
    added = sorted(set(rows.names))
    e_map, e_new = _remap(old.entities, set(added) | rows.gone, added)
    fresh_chunks = sorted(set(rows.chunks))
    c_map, c_new = _remap(old.chunks, rows.chunks_gone | set(fresh_chunks), fresh_chunks)
    entities = _placed(old.entities, e_map, added, e_new)
    chunks = _placed(old.chunks, c_map, fresh_chunks, c_new)
    ec, keep = _renumbered(old.ec, e_map, c_map)
    fresh = _fresh_pairs(entities, chunks, rows)
    width = max(len(chunks), 1)
    ec, sim = _insert(ec, old.sim[keep], fresh, np.full(len(fresh), np.nan, np.float32), width)
    keys = _placed(old.keys, e_map, [name_key(n) for n in added], e_new)
    alt = _placed(old.alt, e_map, [alt_key(n) for n in added], e_new)
    ee, kept_edges = _renumbered(old.ee, e_map, e_map)
    new_ee, new_w = _fresh_edges(entities, rows.edges)
    ee, weight = _insert(ee, old.weight[kept_edges], new_ee, new_w, max(len(entities), 1))
    graph = WalkGraph(version, entities, chunks, keys, alt, ec, sim, ee, weight)
    return graph, np.isnan(sim)


def _remap(
    old: list[str], dropped: Iterable[str], added: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """New index of each old item (-1 if dropped), and the new indexes of ``added`` (sorted).

    ``added`` must not hold an item of ``old`` that is not ``dropped``.
    """
    n = len(old)
    drop = np.zeros(n, dtype=bool)
    for x in dropped:
        i = bisect_left(old, x)
        if i < n and old[i] == x:
            drop[i] = True
    at = np.array([bisect_left(old, a) for a in added], dtype=np.int64)  # old items before each
    before = np.cumsum(np.bincount(at, minlength=n + 1))[:n]  # added items before each old one
    mapping = np.arange(n) - np.cumsum(drop) + before
    mapping[drop] = -1
    dropped_before = np.concatenate([[0], np.cumsum(drop)])[at]
    return mapping, at - dropped_before + np.arange(len(added))


def _placed(old: list[str], mapping: np.ndarray, added: list[str], at: np.ndarray) -> list[str]:
    """The new list: each kept old item at its new index, ``added[k]`` at ``at[k]``."""
    out = np.empty(int((mapping >= 0).sum()) + len(added), dtype=object)
    kept = mapping >= 0
    out[mapping[kept]] = np.array(old, dtype=object)[kept] if len(old) else []
    out[at] = np.array(added, dtype=object) if added else []
    return out.tolist()


def _renumbered(
    pairs: np.ndarray, first: np.ndarray, second: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs whose two ends stay, renumbered (still sorted), and the mask of them."""
    if not len(pairs):
        return pairs.reshape(0, 2), np.zeros(0, dtype=bool)
    a, b = first[pairs[:, 0]], second[pairs[:, 1]]
    keep = (a >= 0) & (b >= 0)
    return np.stack([a[keep], b[keep]], axis=1), keep


def _index(items: list[str], x: str) -> int:
    i = bisect_left(items, x)
    return i if i < len(items) and items[i] == x else -1


def _fresh_pairs(entities: list[str], chunks: list[str], rows: Rows) -> np.ndarray:
    """The (entity, chunk) pairs of the touched entities' live sources, sorted."""
    found: set[tuple[int, int]] = set()
    for name, sources in zip(rows.names, rows.sources, strict=True):
        e = _index(entities, name)
        found.update((e, j) for j in (_index(chunks, c) for c in sources) if j >= 0)
    return np.array(sorted(found), dtype=np.int64).reshape(-1, 2)


def _fresh_edges(entities: list[str], edges: list[Edge]) -> tuple[np.ndarray, np.ndarray]:
    """The touched edges between entities of the new list: (a < b) pairs, sorted, and weights."""
    found: dict[tuple[int, int], float] = {}
    for a, b, w in edges:
        i, j = _index(entities, a), _index(entities, b)
        if i >= 0 and j >= 0 and i != j:
            found[(min(i, j), max(i, j))] = max(float(w if w is not None else 1.0), 0.0)
    keys = sorted(found)
    pairs = np.array(keys, dtype=np.int64).reshape(-1, 2)
    return pairs, np.array([found[k] for k in keys], dtype=np.float64)


def _insert(
    pairs: np.ndarray, values: np.ndarray, fresh: np.ndarray, fresh_values: np.ndarray, width: int
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted ``pairs`` with the (disjoint, sorted) ``fresh`` ones inserted in order."""
    if not len(fresh):
        return pairs, values
    at = np.searchsorted(pairs[:, 0] * width + pairs[:, 1], fresh[:, 0] * width + fresh[:, 1])
    return np.insert(pairs, at, fresh, axis=0), np.insert(values, at, fresh_values)
