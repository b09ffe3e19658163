"""Vector search with the cosine threshold and top_k applied (and traced).

The store is asked without a threshold and the threshold is applied
here, which gives the same hits but lets the trace name every candidate
the threshold removed. With tracing on, a few hits past ``top_k`` are
fetched too, so the trace can show what just missed the cut.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kgrag.storage.base import VectorHit
from kgrag.query.trace import Trace

# Extra hits fetched past top_k when tracing, to show near misses.
TRACE_MARGIN = 10


async def vector_search(storage: Any, namespace: str, vector: np.ndarray, top_k: int,
                        threshold: float, trace: Trace, *, route: str, kind: str,
                        query: str = "", label=None) -> list[VectorHit]:
    """The best ``top_k`` hits of ``namespace`` scoring at least ``threshold``.

    ``label(hit)`` names a hit in the trace (default: its id).
    """
    if top_k <= 0:
        return []
    asked = top_k + (TRACE_MARGIN if trace.enabled else 0)
    hits = await storage.vectors(namespace).query(vector, asked, None)
    hits.sort(key=lambda h: -h.score)
    kept = [h for h in hits[:top_k] if h.score >= threshold]
    if trace.enabled:
        name = label or (lambda h: h.id)
        trace.candidates(route, kind, [{"id": name(h), "score": round(float(h.score), 4)} for h in kept],
                         query=query)
        for h in hits[:top_k]:
            if h.score < threshold:
                trace.drop("retrieval", kind, name(h), f"below cosine_threshold {threshold} ({route})", h.score, route)
        for h in hits[top_k:]:
            if h.score >= threshold:
                trace.drop("retrieval", kind, name(h), f"ranked past top_k {top_k} ({route})", h.score, route)
    return kept


def rrf_fuse(rankings: list[list[str]], k: float = 60,
             weights: list[float] | None = None) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion of id rankings: (id, score), best first.

    An id at 0-based ``rank`` of ranking ``i`` gets ``weights[i] / (k + rank + 1)``
    (weights default to 1). Ties keep the order in which ids were first seen.
    """
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings)):
        for rank, item in enumerate(ranking):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank + 1)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def round_robin(lists: list[list[Any]], key) -> list[Any]:
    """Interleave ``lists`` (first of each, then second of each...), dropping repeated keys."""
    seen: set[Any] = set()
    out = []
    for i in range(max((len(lst) for lst in lists), default=0)):
        for lst in lists:
            if i < len(lst):
                k = key(lst[i])
                if k not in seen:
                    seen.add(k)
                    out.append(lst[i])
    return out
