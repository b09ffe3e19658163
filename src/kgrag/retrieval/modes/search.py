"""Vector search with the cosine threshold and top_k applied (and traced).

The store is asked without a threshold and the threshold is applied
here, which gives the same hits but lets the trace name every candidate
the threshold removed. With tracing on, a few hits past ``top_k`` are
fetched too, so the trace can show what just missed the cut.

With a ``gate`` (a query filter, see :func:`kgrag.retrieval.filter.documents.hit_gate`)
the store is first asked what an unfiltered search asks, then, while the
gate leaves fewer than ``top_k`` above the threshold, ``OVERFETCH`` times
as many (at most ``MAX_WIDENINGS`` times), so a filtered query still fills
its budget. Starting at the unfiltered request keeps a filter that
refuses nothing from changing anything, even how ties are cut.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from kgrag.retrieval.filter.documents import MAX_WIDENINGS, OVERFETCH, Gate
from kgrag.retrieval.trace import Trace
from kgrag.storage.base import VectorHit

if TYPE_CHECKING:
    from kgrag.storage.base import Storage, VectorStore

# Extra hits fetched past top_k when tracing, to show near misses.
TRACE_MARGIN = 10

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Cut:
    """What one search keeps (the ``top_k`` best hits scoring at least ``threshold``) and how it is traced."""

    top_k: int
    threshold: float
    margin: int  # hits fetched past top_k to show near misses
    route: str
    kind: str
    name: Callable[[VectorHit], str]


async def vector_search(
    storage: Storage,
    namespace: str,
    vector: np.ndarray,
    top_k: int,
    threshold: float,
    trace: Trace,
    *,
    route: str,
    kind: str,
    query: str = "",
    label: Callable[[VectorHit], str] | None = None,
    gate: Gate | None = None,
) -> list[VectorHit]:
    """The best ``top_k`` hits of ``namespace`` scoring at least ``threshold`` (and passing ``gate``).

    ``label(hit)`` names a hit in the trace (default: its id).
    """
    if top_k <= 0:
        return []
    cut = _Cut(
        top_k,
        threshold,
        TRACE_MARGIN if trace.enabled else 0,
        route,
        kind,
        label or (lambda h: h.id),
    )
    store = storage.vectors(namespace)
    why: dict[str, str]
    if gate is None:
        hits, why = await _query(store, vector, top_k + cut.margin), {}
    else:
        hits, why = await _gated_query(store, vector, cut, gate)
    passing = [h for h in hits if h.id not in why]
    kept = [h for h in passing[:top_k] if h.score >= threshold]
    if trace.enabled:
        trace.candidates(
            route,
            kind,
            [{"id": cut.name(h), "score": round(float(h.score), 4)} for h in kept],
            query=query,
        )
        _trace_misses(trace, passing, cut)
        _trace_filtered(trace, hits, why, kept, cut)
    return kept


async def _query(store: VectorStore, vector: np.ndarray, k: int) -> list[VectorHit]:
    hits = await store.query(vector, k, None)
    hits.sort(key=lambda h: -h.score)
    return hits


async def _gated_query(
    store: VectorStore, vector: np.ndarray, cut: _Cut, gate: Gate
) -> tuple[list[VectorHit], dict[str, str]]:
    """Hits (best first) and, per hit id the gate refused, why; widened until ``top_k`` pass."""
    asked = cut.top_k
    why: dict[str, str] = {}
    judged: set[str] = set()
    for _ in range(MAX_WIDENINGS + 1):
        hits = await _query(store, vector, asked + cut.margin)
        fresh = [h for h in hits if h.score >= cut.threshold and h.id not in judged]
        for hit, reason in zip(fresh, await gate(fresh), strict=False):
            judged.add(hit.id)
            if reason:
                why[hit.id] = reason
        passing = sum(1 for h in hits if h.score >= cut.threshold and h.id not in why)
        if passing >= cut.top_k or len(hits) < asked + cut.margin or hits[-1].score < cut.threshold:
            break
        asked *= OVERFETCH
    return hits, why


def _trace_misses(trace: Trace, passing: list[VectorHit], cut: _Cut) -> None:
    """Hits the threshold removed, and those just past ``top_k``."""
    route = cut.route
    for h in passing[: cut.top_k]:
        if h.score < cut.threshold:
            trace.drop(
                "retrieval",
                cut.kind,
                cut.name(h),
                f"below cosine_threshold {cut.threshold} ({route})",
                h.score,
                route,
            )
    for h in passing[cut.top_k : cut.top_k + cut.margin]:
        if h.score >= cut.threshold:
            trace.drop(
                "retrieval",
                cut.kind,
                cut.name(h),
                f"ranked past top_k {cut.top_k} ({route})",
                h.score,
                route,
            )


def _trace_filtered(
    trace: Trace, hits: list[VectorHit], why: dict[str, str], kept: list[VectorHit], cut: _Cut
) -> None:
    """Hits the gate refused that would otherwise have ranked within ``top_k``."""
    floor = kept[-1].score if len(kept) >= cut.top_k else float("-inf")
    for h in hits:
        if h.id in why and h.score >= floor:
            trace.drop("filter", cut.kind, cut.name(h), why[h.id], h.score, cut.route)


def rrf_fuse(
    rankings: list[list[str]], k: float = 60, weights: list[float] | None = None
) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion of id rankings: (id, score), best first.

    An id at 0-based ``rank`` of ranking ``i`` gets ``weights[i] / (k + rank + 1)``
    (weights default to 1). Ties keep the order in which ids were first seen.
    """
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings), strict=False):
        for rank, item in enumerate(ranking):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank + 1)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def round_robin(lists: list[list[T]], key: Callable[[T], Hashable]) -> list[T]:
    """Interleave ``lists`` (first of each, then second of each...), dropping repeated keys."""
    seen: set[Hashable] = set()
    out: list[T] = []
    for i in range(max((len(lst) for lst in lists), default=0)):
        for lst in lists:
            if i < len(lst):
                k = key(lst[i])
                if k not in seen:
                    seen.add(k)
                    out.append(lst[i])
    return out
