"""Two ways to compute personalised PageRank on a :class:`~kgrag.knowledge.walk.matrix.Transition`.

Both solve ``p = (1 - d) s + d (P^T p + (mass on dangling nodes) s)``: a
walk that restarts at the seeds ``s`` with probability ``1 - d`` and
otherwise follows an edge; from a node no edge leaves it restarts.

- :func:`power` iterates over every edge until the step changes less than
  ``tol`` (L1): about 26 sweeps at ``d = 0.7``, each one pass over all the
  edges, so its cost grows with the graph;
- :func:`push` is the forward push of Andersen, Chung and Lang: it keeps an
  estimate ``x`` and a residual ``r`` (mass still to spread, ``s`` at
  first) and repeatedly settles the nodes whose residual exceeds ``eps``
  times their out-degree: a share ``1 - d`` of it stays in ``x``, the rest
  moves along the node's edges. Only edges out of such nodes are read, so
  the work depends on ``eps`` and the seeds' neighbourhood, not on the size
  of the graph. It settles all such nodes at once per round (numpy), and
  the residual left at the end is credited with the share it would keep.

The push's answer is within the residual it leaves of the exact one; at the
``eps`` the ``ppr`` mode uses, its top chunks are the exact walk's on the
test corpora, the HotpotQA and MuSiQue evaluation indexes and the 100k
benchmark (docs/benchmarks.md, the ppr section).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from kgrag.knowledge.walk.matrix import Transition

# A push stops after this many rounds whatever the residual (far more than it takes).
MAX_ROUNDS = 200


def spread(t: Transition, p: np.ndarray) -> np.ndarray:
    """One step of the walk, ``P^T p``."""
    return np.bincount(t.dst, weights=t.prob * p[t.src], minlength=len(p))


def power(
    t: Transition, seeds: np.ndarray, damping: float, tol: float = 1e-5, max_iter: int = 60
) -> np.ndarray:
    """The exact walk by power iteration; the result sums to 1."""
    s = seeds / seeds.sum()
    p: np.ndarray = s.copy()
    for _ in range(max_iter):
        nxt = (1.0 - damping) * s + damping * (spread(t, p) + p[t.dangling].sum() * s)
        done = np.abs(nxt - p).sum() < tol
        p = nxt
        if done:
            break
    return p


def push(t: Transition, seeds: np.ndarray, damping: float, eps: float) -> np.ndarray:
    """The walk by forward push, settling residuals above ``eps`` per out-edge."""
    s = seeds / seeds.sum()
    x, r = np.zeros(len(s)), s.copy()
    out = np.diff(t.indptr)
    limit = eps * np.maximum(out, 1)
    for _ in range(MAX_ROUNDS):
        active = np.flatnonzero(r > limit)
        if not len(active):
            break
        mass = r[active]
        r[active] = 0.0
        x[active] += (1.0 - damping) * mass
        _send(t, r, active, damping * mass, out[active])
        lost = mass[t.dangling[active]].sum()
        if lost:
            r += damping * lost * s
    walked: np.ndarray = x + (1.0 - damping) * r
    return walked


def _send(
    t: Transition, r: np.ndarray, nodes: np.ndarray, mass: np.ndarray, counts: np.ndarray
) -> None:
    """Add ``mass[i]`` spread over the out-edges of ``nodes[i]`` to ``r``."""
    total = int(counts.sum())
    if not total:
        return
    first = np.repeat(t.indptr[nodes] - np.cumsum(counts) + counts, counts)
    edges = first + np.arange(total)
    r += np.bincount(
        t.dst[edges], weights=t.prob[edges] * np.repeat(mass, counts), minlength=len(r)
    )
