"""Bounded, flow-pruned search for paths between a question's entities.

In the manner of PathRAG: every endpoint (a seed entity of the question,
or a target matching its high-level keywords) sends out a unit of
resource. At each hop the resource at a node is split among its
neighbours by edge weight and decays by ``alpha``; a half-path whose
resource falls below ``threshold`` is not followed. Half-paths are
expanded best first (most resource first) from all endpoints at once, up
to ``max_hops`` each, and two half-paths from endpoints of different
names that meet at a node make a path (one end at least an anchor: a seed).

A path's score is the resource it carries from one end to the other
(the geometric mean of its two directions), times its ends' weights::

    alpha ** hops * prod(edge weights) / prod(totals of the nodes it leaves)

so a path through a hub (whose resource is split thousands of ways)
scores low, and every hop costs ``alpha``. Half-paths from an anchor that
end at no endpoint are *open* paths, scored by their resource: the seed's
strongest chains, for a question whose other end the graph does not name;
they come after every connecting path.

The search is bounded by ``max_expanded`` node expansions and a deadline;
:func:`select_paths` then keeps the best ``max_paths``, a path and its
reverse counted once and a path inside a longer kept one left out.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field

import numpy as np

from kgrag.retrieval.modes.path_graph import PathGraph

# Expansions between two looks at the clock.
CLOCK_EVERY = 32
# Candidates kept (and judged by select_paths) per path asked for.
WINDOW = 20


@dataclass(frozen=True, slots=True)
class PathLimits:
    """How far and how long the search goes, and how the resource flows."""

    max_hops: int = 3
    max_paths: int = 10
    max_expanded: int = 2000
    deadline_s: float = 0.25
    alpha: float = 0.8
    threshold: float = 1e-3
    arrivals: int = 4  # best half-paths kept per (node, endpoint)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where paths may start or end.

    Endpoints of one ``group`` (forms of one name) are never joined; a path
    needs an ``anchor`` at one end at least; ``weight`` scales the score of
    the paths ending here.
    """

    node: int
    group: int
    anchor: bool = True
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class FoundPath:
    """A path as entity indexes in chain order; ``open`` when it ends at no endpoint."""

    nodes: tuple[int, ...]
    score: float
    open: bool = False

    @property
    def hops(self) -> int:
        return len(self.nodes) - 1


@dataclass(slots=True)
class Outcome:
    """The ranked candidates (connecting and open paths) and the work done."""

    paths: list[FoundPath]
    expanded: int
    pushed: int
    stopped: str  # done, max_expanded or deadline


@dataclass(slots=True)
class _Search:
    graph: PathGraph
    ends: dict[int, Endpoint]
    limits: PathLimits
    heap: list[tuple[float, int, int, tuple[int, ...]]] = field(default_factory=list)
    arrivals: dict[int, dict[int, list[tuple[float, tuple[int, ...]]]]] = field(
        default_factory=dict
    )
    found: dict[tuple[int, ...], float] = field(default_factory=dict)
    open: list[tuple[float, tuple[int, ...]]] = field(default_factory=list)  # a min-heap
    pushed: int = 0

    def push(self, origin: int, path: tuple[int, ...], flow: float) -> None:
        self._arrive(origin, path, flow)
        if len(path) - 1 < self.limits.max_hops:
            self.pushed += 1
            heapq.heappush(self.heap, (-flow, self.pushed, origin, path))

    def _arrive(self, origin: int, path: tuple[int, ...], flow: float) -> None:
        """Record a half-path from ``origin`` ending at ``path[-1]`` and join it with the others there."""
        node = path[-1]
        here = self.arrivals.setdefault(node, {})
        mine_end = self.ends[origin]
        for other, halves in here.items():
            end = self.ends[other]
            if end.group != mine_end.group and (end.anchor or mine_end.anchor):
                weight = end.weight * mine_end.weight
                for other_flow, other_path in halves:
                    self._join(path, flow, other_path, other_flow, weight)
        if len(path) > 1 and mine_end.anchor and node not in self.ends:
            self._open(path, flow * mine_end.weight)
        mine = here.setdefault(origin, [])
        if len(mine) < self.limits.arrivals:
            mine.append((flow, path))

    def _open(self, path: tuple[int, ...], score: float) -> None:
        """Keep ``path`` among the best ``WINDOW * max_paths`` open paths."""
        if len(self.open) < WINDOW * max(self.limits.max_paths, 1):
            heapq.heappush(self.open, (score, path))
        elif score > self.open[0][0]:
            heapq.heapreplace(self.open, (score, path))

    def _join(
        self, a: tuple[int, ...], fa: float, b: tuple[int, ...], fb: float, weight: float
    ) -> None:
        if len(a) + len(b) - 2 > self.limits.max_hops or len(set(a) & set(b)) != 1:
            return
        full = a + b[-2::-1]
        totals = self.graph.totals
        meet = totals[a[-1]]
        ends = float(np.sqrt(totals[full[0]] * totals[full[-1]]))
        score = fa * fb * ends / meet if meet > 0 else fa * fb
        if score < self.limits.threshold:  # too little of the resource gets through
            return
        score *= weight
        key = min(full, full[::-1])
        if score > self.found.get(key, 0.0):
            self.found[key] = float(score)

    def expand(self, origin: int, path: tuple[int, ...], flow: float) -> None:
        node = path[-1]
        total = self.graph.totals[node]
        if total <= 0:
            return
        nbrs, weights = self.graph.around(node)
        flows = flow * self.limits.alpha * weights / total
        keep = np.flatnonzero(flows >= self.limits.threshold)
        for j in keep[np.argsort(-flows[keep], kind="stable")]:
            nxt = int(nbrs[j])
            if nxt not in path:
                self.push(origin, (*path, nxt), float(flows[j]))


def search_paths(graph: PathGraph, ends: list[Endpoint], limits: PathLimits) -> Outcome:
    """Paths of up to ``limits.max_hops`` between endpoints, best first (the first of a node wins)."""
    by_node: dict[int, Endpoint] = {}
    for end in ends:
        by_node.setdefault(end.node, end)
    search = _Search(graph, by_node, limits)
    for node in by_node:
        search.push(node, (node,), 1.0)
    deadline = time.monotonic() + limits.deadline_s
    expanded, stopped = 0, "done"
    while search.heap:
        if expanded >= limits.max_expanded:
            stopped = "max_expanded"
            break
        if expanded % CLOCK_EVERY == 0 and time.monotonic() > deadline:
            stopped = "deadline"
            break
        neg, _, origin, path = heapq.heappop(search.heap)
        search.expand(origin, path, -neg)
        expanded += 1
    return Outcome(_ranked(search), expanded, search.pushed, stopped)


def _ranked(search: _Search) -> list[FoundPath]:
    """Connecting paths, then open ones, each by score, then fewer hops, then indexes."""
    out = [FoundPath(nodes, score) for nodes, score in search.found.items()]
    out += [FoundPath(nodes, score, True) for score, nodes in search.open]
    return sorted(out, key=lambda p: (p.open, -p.score, p.hops, p.nodes))


def _inside(short: tuple[int, ...], long: tuple[int, ...]) -> bool:
    """Whether ``short`` runs along ``long`` (either way round) as consecutive nodes."""
    n = len(short)
    if n > len(long) or not set(short).issubset(long):
        return False
    rev = short[::-1]
    return any(long[i : i + n] in (short, rev) for i in range(len(long) - n + 1))


def select_paths(paths: list[FoundPath], max_paths: int) -> list[FoundPath]:
    """The best ``max_paths`` of ranked ``paths``: connecting ones first, then open ones.

    A path inside an already kept one is skipped; a path that contains kept
    ones (of its kind) replaces them, even when ``max_paths`` are kept.
    Only the first ``WINDOW * max_paths`` candidates of each kind are judged.
    """
    kept: list[FoundPath] = []
    for is_open in (False, True):
        fixed = list(kept)
        window = [p for p in paths if p.open == is_open][: WINDOW * max(max_paths, 1)]
        for path in window:
            if any(_inside(path.nodes, k.nodes) for k in kept):
                continue
            inner = [k for k in kept if k not in fixed and _inside(k.nodes, path.nodes)]
            if inner or len(kept) < max_paths:
                kept = [k for k in kept if k not in inner] + [path]
    return kept
