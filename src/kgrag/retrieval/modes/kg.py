"""Graph routes: local (entities first) and global (relations first).

local:  low-level keywords -> entity vectors (top_k) -> nodes with degrees
        -> their edges, ranked by (edge degree, weight)
global: high-level keywords -> relation vectors (top_k) -> edges, in vector
        order -> their endpoint entities, in order of appearance

Every storage read is batched: a route makes at most four graph calls
whatever the number of hits.

With a document filter (``ctx.doc_filter``) the vector searches keep only
allowed entities / relations (over-fetching to fill ``top_k``), and the
edges around local entities and the endpoints of global relations are
filtered too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from kgrag.retrieval.filter.documents import hit_gate, keep_allowed
from kgrag.retrieval.modes.search import round_robin, vector_search
from kgrag.retrieval.records import EntityHit, RelationHit, RetrievalContext
from kgrag.retrieval.trace import Trace, relation_id
from kgrag.storage.base import edge_key
from kgrag.storage.layout import ENTITY_VECTORS, RELATION_VECTORS
from kgrag.storage.layout.typed import TypedGraph

# The fewest tokens one relation line (plus its line break) can cost.
MIN_RELATION_TOKENS = 12


def _keywords_text(words: list[str]) -> str:
    return ", ".join(words)


async def local_route(ctx: RetrievalContext) -> tuple[list[EntityHit], list[RelationHit]]:
    """Entities matching the low-level keywords, and the edges around them."""
    vector = ctx.vectors.get("low")
    if vector is None:
        return [], []
    p, trace = ctx.param, ctx.trace
    hits = await vector_search(
        ctx.storage,
        ENTITY_VECTORS,
        vector,
        p.top_k,
        p.cosine_threshold,
        trace,
        route="local",
        kind="entity",
        query=_keywords_text(ctx.keywords.low),
        label=lambda h: str(h.meta.get("name", h.id)),
        gate=hit_gate(ctx.doc_filter, "entity"),
    )
    names = list(dict.fromkeys(str(h.meta["name"]) for h in hits if h.meta.get("name")))
    scores = {str(h.meta.get("name")): float(h.score) for h in hits}
    graph, rows = ctx.storage.graph, TypedGraph(ctx.storage.graph)
    nodes, edges_by_node = await asyncio.gather(rows.nodes(names), graph.node_edges(names))
    for name in names:
        if name not in nodes:
            trace.drop(
                "graph", "entity", name, "entity vector has no graph node", scores[name], "local"
            )
    found = [n for n in names if n in nodes]
    degrees = {n: len(edges_by_node.get(n, [])) for n in found}
    pairs = list(dict.fromkeys(edge_key(*pair) for n in found for pair in edges_by_node.get(n, [])))
    pairs = await keep_allowed(ctx.doc_filter, pairs, trace, kind="relation", route="local")
    neighbours = list(dict.fromkeys(x for pair in pairs for x in pair if x not in degrees))
    degrees.update(await graph.node_degrees(neighbours) if neighbours else {})
    ranked = _rank_by_degree(pairs, degrees, p.max_relation_tokens, trace)
    edges = await rows.edges(ranked)
    relations = [
        RelationHit(a, b, edges[(a, b)], None, degrees.get(a, 0) + degrees.get(b, 0), "local")
        for a, b in ranked
        if (a, b) in edges
    ]
    relations.sort(key=lambda r: (-r.degree, -r.weight))
    entities = [EntityHit(n, nodes[n], scores[n], degrees.get(n, 0), "local") for n in found]
    if trace.enabled:
        trace.candidates(
            "local/edges",
            "relation",
            [
                {
                    "id": relation_id(r.src, r.tgt),
                    "score": None,
                    "degree": r.degree,
                    "weight": r.weight,
                }
                for r in relations
            ],
        )
    return entities, relations


def _rank_by_degree(
    pairs: list[tuple[str, str]], degrees: dict[str, int], max_tokens: int, trace: Trace
) -> list[tuple[str, str]]:
    """Pairs by edge degree, cut where no later one could fit ``max_tokens``.

    A relation line costs at least :data:`MIN_RELATION_TOKENS`, so at most
    ``max_tokens // MIN_RELATION_TOKENS`` relations can ever be kept. Pairs
    tied in degree with the last of those are kept too (their weights
    decide), up to twice that many.
    """

    def degree(pair: tuple[str, str]) -> int:
        return degrees.get(pair[0], 0) + degrees.get(pair[1], 0)

    ranked = sorted(pairs, key=lambda pair: -degree(pair))
    limit = max_tokens // MIN_RELATION_TOKENS + 1
    if len(ranked) <= limit:
        return ranked
    edge = degree(ranked[limit - 1])
    end = limit
    while end < min(len(ranked), 2 * limit) and degree(ranked[end]) == edge:
        end += 1
    if trace.enabled:
        for pair in ranked[end:]:
            trace.drop(
                "truncation",
                "relation",
                relation_id(*pair),
                f"ranked {limit}+ by degree: cannot fit max_relation_tokens {max_tokens}",
                route="local",
            )
    return ranked[:end]


async def global_route(ctx: RetrievalContext) -> tuple[list[EntityHit], list[RelationHit]]:
    """Relations matching the high-level keywords, and their endpoints."""
    vector = ctx.vectors.get("high")
    if vector is None:
        return [], []
    p, trace = ctx.param, ctx.trace
    hits = await vector_search(
        ctx.storage,
        RELATION_VECTORS,
        vector,
        p.top_k,
        p.cosine_threshold,
        trace,
        route="global",
        kind="relation",
        query=_keywords_text(ctx.keywords.high),
        label=lambda h: relation_id(
            *edge_key(str(h.meta.get("src", h.id)), str(h.meta.get("tgt", "")))
        ),
        gate=hit_gate(ctx.doc_filter, "relation"),
    )
    scored: dict[tuple[str, str], float] = {}
    for h in hits:
        if h.meta.get("src") is not None and h.meta.get("tgt") is not None:
            scored.setdefault(edge_key(str(h.meta["src"]), str(h.meta["tgt"])), float(h.score))
    graph, rows = ctx.storage.graph, TypedGraph(ctx.storage.graph)
    edges = await rows.edges(list(scored))
    _drop_unknown_edges(trace, scored, edges)
    pairs = [pair for pair in scored if pair in edges]
    names = list(dict.fromkeys(x for pair in pairs for x in pair))
    names = await keep_allowed(ctx.doc_filter, names, trace, kind="entity", route="global")
    nodes, degrees = await asyncio.gather(rows.nodes(names), graph.node_degrees(names))
    for name in names:
        if name not in nodes:
            trace.drop(
                "graph", "entity", name, "relation endpoint has no graph node", route="global"
            )
    relations = [
        RelationHit(
            a, b, edges[(a, b)], scored[(a, b)], degrees.get(a, 0) + degrees.get(b, 0), "global"
        )
        for a, b in pairs
    ]
    entities = [
        EntityHit(n, nodes[n], None, degrees.get(n, 0), "global") for n in names if n in nodes
    ]
    if trace.enabled:
        trace.candidates(
            "global/endpoints",
            "entity",
            [{"id": e.name, "score": None, "degree": e.degree} for e in entities],
        )
    return entities, relations


def _drop_unknown_edges(
    trace: Trace, scored: dict[tuple[str, str], float], edges: Mapping[tuple[str, str], object]
) -> None:
    """Record the relation vectors whose pair has no graph edge."""
    for pair, score in scored.items():
        if pair not in edges:
            trace.drop(
                "graph",
                "relation",
                relation_id(*pair),
                "relation vector has no graph edge",
                score,
                "global",
            )


async def hybrid_route(ctx: RetrievalContext) -> tuple[list[EntityHit], list[RelationHit]]:
    """Local and global results interleaved (local first), deduplicated."""
    (le, lr), (ge, gr) = await asyncio.gather(local_route(ctx), global_route(ctx))
    entities = round_robin([le, ge], key=lambda e: e.name)
    relations = round_robin([lr, gr], key=lambda r: r.key)
    return entities, relations
