"""The ``path`` route: chains of relations between the question's entities.

1. **Endpoints.** Seeds: entities named literally in the question or by a
   low-level keyword; the nearest entities to the low-level keywords when
   fewer than two are named. Targets: entities named by a high-level
   keyword, then the nearest entities to the high-level keywords.
2. **Search** (:mod:`kgrag.retrieval.modes.path_search`): flow-pruned, best
   first, within the query's ``path_max_hops``, ``path_max_expanded`` and
   ``path_deadline_ms``; candidates rescored by their relations' similarity
   to the question; ``path_max_paths`` kept, connecting paths before the
   seeds' open chains, reverses and sub-paths folded.
3. **Evidence.** Each kept path's edges and nodes are read, and for each
   edge the source chunk closest to the question, in chain order.

Mode ``path`` (in :mod:`kgrag.retrieval.modes.registry`) lists the paths, their
entities and relations, and their chunks interleaved with the direct chunk
hits; mode ``mix`` adds them when the question names two or more entities
or reads as multi-hop (:func:`wants_paths`). See docs/path.md.

With a document filter, seeds and targets must be allowed, and a path with
an edge the filter does not allow is left out (the search itself crosses
the whole graph).
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

from kgrag.ingest.ids import relation_vector_id
from kgrag.retrieval.filter.documents import hit_gate, keep_allowed
from kgrag.retrieval.modes.path_graph import PathGraph, cached_path_graph
from kgrag.retrieval.modes.path_search import (
    WINDOW,
    Endpoint,
    FoundPath,
    PathLimits,
    search_paths,
    select_paths,
)
from kgrag.retrieval.modes.search import vector_search
from kgrag.retrieval.param import QueryParam
from kgrag.retrieval.records import (
    ChunkHit,
    EntityHit,
    PathHit,
    RelationHit,
    RetrievalContext,
    as_list,
)
from kgrag.storage.base import edge_key
from kgrag.storage.layout import CHUNK_VECTORS, ENTITY_VECTORS, RELATION_VECTORS
from kgrag.storage.layout.rows import NodeRow
from kgrag.storage.layout.typed import TypedGraph

# Entity vector hits taken as seeds (low-level keywords) and as targets (high-level ones).
SEED_K = 5
TARGET_K = 5
# Named seeds and targets at most.
MAX_SEEDS = 8
MAX_TARGETS = 5
# Score factors of paths ending at a vector-found seed, and at a target.
VECTOR_WEIGHT = 0.5
TARGET_WEIGHT = 0.5
# Candidates rescored by their relations' similarity to the question, and how strongly.
RERANK_N = 200
RELEVANCE = 10.0
# Candidates beyond path_max_paths named in the trace.
TRACE_MARGIN = 5
# A question that reads as a chain: "the woman who portrayed ...", "the director of the film ...".
_CHAIN = re.compile(
    r"\b(?:the|a|an)\s+(?:\w+\s+){0,3}?(?:who|whose|which|that|where)\s+\w+"
    r"|\b(?:of|by|for|in)\s+the\s+(?:\w+\s+){0,3}?(?:of|by|for|in)\s+(?:the\s+)?[A-Z0-9]",
    re.IGNORECASE,
)


def asks_multi_hop(question: str) -> bool:
    """Whether ``question`` reads as a chain of facts (a relative clause or a nested "of the")."""
    return bool(_CHAIN.search(question))


def limits_of(param: QueryParam) -> PathLimits:
    """The search limits of one query."""
    return PathLimits(
        max_hops=param.path_max_hops,
        max_paths=param.path_max_paths,
        max_expanded=param.path_max_expanded,
        deadline_s=param.path_deadline_ms / 1000.0,
    )


@dataclass(slots=True)
class Endpoints:
    """The search's endpoints, seeds first, and how each was found (name, vector or keyword)."""

    ends: list[Endpoint] = field(default_factory=list)
    how: dict[int, str] = field(default_factory=dict)

    def add(
        self,
        node: int,
        how: str,
        group: int | None = None,
        *,
        anchor: bool = True,
        weight: float = 1.0,
    ) -> None:
        """Add ``node`` unless it is there (its own group unless ``group`` is given)."""
        if node not in self.how:
            self.how[node] = how
            own = -len(self.ends) - 1  # named groups are numbered from 0
            self.ends.append(Endpoint(node, own if group is None else group, anchor, weight))

    def count(self, how: str) -> int:
        return sum(1 for h in self.how.values() if h == how)

    @property
    def seeds(self) -> list[int]:
        return [e.node for e in self.ends if self.how[e.node] != "keyword"]

    @property
    def targets(self) -> list[int]:
        return [e.node for e in self.ends if self.how[e.node] == "keyword"]


@dataclass(slots=True)
class PathFound:
    """What the route found: paths, their entities and relations, their chunks."""

    paths: list[PathHit] = field(default_factory=list)
    entities: list[EntityHit] = field(default_factory=list)
    relations: list[RelationHit] = field(default_factory=list)
    chunks: list[ChunkHit] = field(default_factory=list)


def named_groups(ctx: RetrievalContext, graph: PathGraph) -> list[list[int]]:
    """Entities named literally in the question or by a low-level keyword, one group per name."""
    groups = graph.named_in(ctx.question) + [graph.lookup(w) for w in ctx.keywords.low]
    return list({tuple(g): g for g in groups if g}.values())


async def _allowed_nodes(
    ctx: RetrievalContext, graph: PathGraph, nodes: list[int], route: str
) -> list[int]:
    names = await keep_allowed(
        ctx.doc_filter, [graph.entities[i] for i in nodes], ctx.trace, kind="entity", route=route
    )
    return [graph.index[n] for n in names]


async def _nearest(
    ctx: RetrievalContext, graph: PathGraph, slot: str, k: int, route: str
) -> list[int]:
    """Entities nearest the ``slot`` keywords' vector."""
    vector = ctx.vectors.get(slot)
    if vector is None or k <= 0:
        return []
    words = ctx.keywords.low if slot == "low" else ctx.keywords.high
    hits = await vector_search(
        ctx.storage,
        ENTITY_VECTORS,
        vector,
        k,
        ctx.param.cosine_threshold,
        ctx.trace,
        route=route,
        kind="entity",
        query=", ".join(words),
        label=lambda h: str(h.meta.get("name", h.id)),
        gate=hit_gate(ctx.doc_filter, "entity"),
    )
    names = (str(h.meta.get("name", "")) for h in hits)
    return [graph.index[n] for n in names if n in graph.index]


async def endpoints(ctx: RetrievalContext, graph: PathGraph) -> Endpoints:
    """The seeds and targets of ``ctx``'s question in ``graph``.

    Named entities anchor paths; the nearest entities to the low-level
    keywords anchor them only when nothing is named, and weigh
    :data:`VECTOR_WEIGHT`; targets never anchor and weigh :data:`TARGET_WEIGHT`.
    """
    out = Endpoints()
    groups = named_groups(ctx, graph)
    allowed = set(await _allowed_nodes(ctx, graph, [i for g in groups for i in g], "path/seeds"))
    for number, group in enumerate(groups):
        for node in group:
            if node in allowed and out.count("name") < MAX_SEEDS:
                out.add(node, "name", number)
    if len(groups) < 2:  # too few names to connect: the nearest entities join in
        anchor = not out.ends
        for node in await _nearest(ctx, graph, "low", SEED_K, "path/seeds"):
            out.add(node, "vector", anchor=anchor, weight=VECTOR_WEIGHT)
    wanted = [i for w in ctx.keywords.high for i in graph.lookup(w)]
    wanted = await _allowed_nodes(ctx, graph, wanted, "path/targets")
    wanted += await _nearest(ctx, graph, "high", TARGET_K, "path/targets")
    for node in wanted:
        if out.count("keyword") < MAX_TARGETS:
            out.add(node, "keyword", anchor=False, weight=TARGET_WEIGHT)
    return out


def wants_paths(ctx: RetrievalContext, graph: PathGraph) -> bool:
    """Whether ``mix`` adds paths: two or more entities named, or a multi-hop question."""
    return len(named_groups(ctx, graph)) >= 2 or asks_multi_hop(ctx.question)


def _trace_endpoints(ctx: RetrievalContext, graph: PathGraph, ends: Endpoints) -> None:
    for route, nodes in (
        ("path/endpoints/seeds", {i: ends.how[i] for i in ends.seeds}),
        ("path/endpoints/targets", {i: ends.how[i] for i in ends.targets}),
    ):
        ctx.trace.candidates(
            route,
            "entity",
            [{"id": graph.entities[i], "score": None, "found_by": how} for i, how in nodes.items()],
            query=ctx.question,
        )


async def _allowed(
    ctx: RetrievalContext, graph: PathGraph, paths: list[FoundPath]
) -> list[FoundPath]:
    """``paths`` less those with an edge the document filter does not allow (traced with its reason)."""
    flt = ctx.doc_filter
    if not flt.is_active:
        return paths
    steps = [[_pair(graph, a, b) for a, b in pairwise(p.nodes)] for p in paths]
    ok = await flt.allowed_keys([k for ks in steps for k in ks])
    kept = []
    for p, keys in zip(paths, steps, strict=True):
        blocked = next((k for k in keys if k not in ok), None)
        if blocked is None:
            kept.append(p)
        else:
            ctx.trace.drop(
                "filter", "path", _label(graph, p), flt.key_reason(blocked), p.score, "path"
            )
    return kept


async def _rerank(
    ctx: RetrievalContext, graph: PathGraph, paths: list[FoundPath]
) -> list[FoundPath]:
    """The first :data:`RERANK_N` paths rescored by how close their relations are to the question.

    A path's score is multiplied by ``exp(RELEVANCE * mean cosine)`` of its
    edges' relation vectors and the question's.
    """
    head = paths[:RERANK_N]
    steps = [[_pair(graph, a, b) for a, b in pairwise(p.nodes)] for p in head]
    ids = list(dict.fromkeys(relation_vector_id(*k) for ks in steps for k in ks))
    if RELEVANCE <= 0 or not ids:
        return paths
    vectors = await ctx.storage.vectors(RELATION_VECTORS).get_vectors(ids)
    query = np.asarray(ctx.vectors["query"], dtype=np.float32)
    sims = {i: float(np.asarray(v, dtype=np.float32) @ query) for i, v in vectors.items()}
    rescored = []
    for p, ks in zip(head, steps, strict=True):
        cos = float(np.mean([sims.get(relation_vector_id(*k), 0.0) for k in ks]))
        rescored.append(dataclasses.replace(p, score=p.score * math.exp(RELEVANCE * cos)))
    rescored.sort(key=lambda p: (p.open, -p.score, p.hops))
    return rescored + paths[RERANK_N:]


def _pair(graph: PathGraph, a: int, b: int) -> tuple[str, str]:
    x, y = graph.entities[a], graph.entities[b]
    return (x, y) if x <= y else (y, x)


def _label(graph: PathGraph, path: FoundPath) -> str:
    return " -> ".join(graph.entities[i] for i in path.nodes)


def _oriented(path: FoundPath, rank: dict[int, int]) -> tuple[int, ...]:
    """A connecting path read from its better-ranked end (an open one starts at its seed)."""
    first, last = (rank.get(path.nodes[i], len(rank)) for i in (0, -1))
    return path.nodes[::-1] if not path.open and last < first else path.nodes


async def _hits(
    ctx: RetrievalContext, graph: PathGraph, kept: list[FoundPath], rank: dict[int, int]
) -> PathFound:
    """Read the kept paths' nodes and edges into hits (paths whose edge has gone are dropped)."""
    chains = [[graph.entities[i] for i in _oriented(p, rank)] for p in kept]
    steps = [[edge_key(a, b) for a, b in pairwise(c)] for c in chains]
    rows = TypedGraph(ctx.storage.graph)
    edges = await rows.edges(list(dict.fromkeys(k for ks in steps for k in ks)))
    nodes = await rows.nodes(list(dict.fromkeys(n for c in chains for n in c)))
    out = PathFound()
    for p, chain, keys in zip(kept, chains, steps, strict=True):
        if any(k not in edges for k in keys) or any(n not in nodes for n in chain):
            reason = "an edge or node of it is no longer in the graph"
            ctx.trace.drop("graph", "path", " -> ".join(chain), reason, p.score, "path")
            continue
        out.paths.append(PathHit(chain, [edges[k] for k in keys], p.score, p.open))
    out.entities, out.relations = _members(graph, out.paths, nodes)
    return out


def _members(
    graph: PathGraph, paths: list[PathHit], nodes: dict[str, NodeRow]
) -> tuple[list[EntityHit], list[RelationHit]]:
    """The paths' entities and relations, in order of first appearance (scored by their best path)."""
    entities: dict[str, EntityHit] = {}
    relations: dict[tuple[str, str], RelationHit] = {}
    for p in paths:
        for name in p.nodes:
            if name not in entities:
                degree = graph.degree(graph.index[name])
                entities[name] = EntityHit(name, nodes[name], p.score, degree, "path")
        for a, b, data in zip(p.nodes, p.nodes[1:], p.edges, strict=False):
            key = edge_key(a, b)
            if key not in relations:
                degree = entities[a].degree + entities[b].degree
                relations[key] = RelationHit(*key, data, p.score, degree, "path")
    return list(entities.values()), list(relations.values())


async def _evidence(ctx: RetrievalContext, found: PathFound) -> list[ChunkHit]:
    """For each edge of each path in order, its source chunk most similar to the question."""
    flt = ctx.doc_filter
    per_edge = [
        [c for c in as_list(data.get("source_ids")) if flt.allows_chunk_id(c)]
        for p in found.paths
        for data in p.edges
    ]
    wanted = list(dict.fromkeys(c for ids in per_edge for c in ids))
    if not wanted:
        return []
    vectors = await ctx.storage.vectors(CHUNK_VECTORS).get_vectors(wanted)
    query = np.asarray(ctx.vectors["query"], dtype=np.float32)
    sims = {c: float(np.asarray(v, dtype=np.float32) @ query) for c, v in vectors.items()}
    out: dict[str, ChunkHit] = {}
    for ids in per_edge:
        ranked = sorted((c for c in ids if c in sims and c not in out), key=lambda c: -sims[c])
        if ranked:
            out[ranked[0]] = ChunkHit(ranked[0], sims[ranked[0]], "path")
    return list(out.values())


def _trace_search(
    ctx: RetrievalContext,
    graph: PathGraph,
    ranked: list[FoundPath],
    kept: list[FoundPath],
    found: PathFound,
    stats: str,
) -> None:
    """The search's note, the kept paths (route ``path``) and the next few candidates."""
    ctx.trace.note("graph", stats)
    if not ctx.trace.enabled:
        return
    items = [
        {"id": p.id, "score": round(p.score, 6), "hops": p.hops, "open": p.open}
        for p in found.paths
    ]
    ctx.trace.candidates("path", "path", items, query=ctx.question)
    chosen = {p.nodes for p in kept}
    reason = f"past path_max_paths {ctx.param.path_max_paths} (or inside a kept path)"
    for p in [p for p in ranked if p.nodes not in chosen][:TRACE_MARGIN]:
        ctx.trace.drop("truncation", "path", _label(graph, p), reason, p.score, "path")


async def _graph(ctx: RetrievalContext) -> PathGraph:
    started = time.perf_counter()
    graph, built = await cached_path_graph(ctx.storage)
    if built:
        ctx.trace.note(
            "graph",
            f"path graph built: {len(graph.entities)} entities, "
            f"{len(graph.neighbours) // 2} edges in {time.perf_counter() - started:.2f}s",
        )
    return graph


async def path_route(ctx: RetrievalContext, graph: PathGraph | None = None) -> PathFound:
    """Paths between the question's entities, with their entities, relations and chunks."""
    graph = graph or await _graph(ctx)
    ends = await endpoints(ctx, graph)
    if ctx.trace.enabled:
        _trace_endpoints(ctx, graph, ends)
    if not ends.seeds:
        ctx.trace.note("graph", "path: no seed entity found")
        return PathFound()
    limits = limits_of(ctx.param)
    outcome = search_paths(graph, ends.ends, limits)
    judged = 2 * WINDOW * max(limits.max_paths, 1)  # what selection can reach, either kind
    ranked = await _allowed(ctx, graph, (await _rerank(ctx, graph, outcome.paths))[:judged])
    kept = select_paths(ranked, limits.max_paths)
    stats = (
        f"path search: {len(ends.seeds)} seed(s), {len(ends.targets)} target(s), "
        f"{outcome.expanded} node expansion(s), {len(outcome.paths)} candidate(s), "
        f"stopped: {outcome.stopped}"
    )
    found = await _hits(ctx, graph, kept, {e.node: i for i, e in enumerate(ends.ends)})
    _trace_search(ctx, graph, ranked, kept, found, stats)
    found.chunks = await _evidence(ctx, found)
    return found


async def mix_paths(ctx: RetrievalContext) -> PathFound:
    """:func:`path_route` when the question :func:`wants_paths`, else nothing."""
    graph = await _graph(ctx)
    if not wants_paths(ctx, graph):
        ctx.trace.note(
            "graph", "path: no path section (fewer than two entities named, not multi-hop)"
        )
        return PathFound()
    return await path_route(ctx, graph)
