"""The ``ppr`` query mode: personalised PageRank over entities and chunks.

In the manner of HippoRAG 2: the question picks seed nodes, a random walk
with restart spreads their weight through the graph, and chunks are ranked
by the weight they end up with, so a chunk that shares no words with the
question can still rank high when the question's entities lead to it.

Seeds (see :class:`PPRSettings` for the weights):

- entities found by vector search with the question and with its
  low-level keywords (rank-weighted), and entities whose name appears
  literally in the question; each divided by ``chunks ** specificity``, so
  a name found in a thousand chunks spreads thinly;
- endpoints of the relations (facts) most similar to the question;
- chunks found directly (dense + BM25, weighted reciprocal-rank fusion),
  the group weighing as much as the entity seeds together.

The edges (:class:`~kgrag.knowledge.walk.matrix.EdgeWeights`) send the walk from
a chunk to its more specific names and from a name to the chunks about it.

With a document filter (``ctx.doc_filter``) only allowed entities,
relations and chunks seed the walk, and only allowed chunks and entities
are ranked into the result (the walk itself crosses the whole graph).

The walk runs on :class:`~kgrag.knowledge.walk.matrix.PPRGraph` (the stored
walk graph, cached per storage): by forward push
(:func:`~kgrag.knowledge.walk.pagerank.push`) on a graph of
``push_min_edges`` transitions or more, by the exact power iteration below
that. The context lists the top ``chunk_top_k`` chunks by PageRank
mass, the ``top_k`` entities with the most mass and the relations among
them; the usual token budgets apply.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import numpy as np

from kgrag.knowledge.walk.matrix import EdgeWeights, PPRGraph, cached_graph
from kgrag.retrieval.filter.documents import MAX_WIDENINGS, OVERFETCH, hit_gate, keep_allowed
from kgrag.retrieval.modes.chunks import lexical_hits
from kgrag.retrieval.modes.registry import register_mode
from kgrag.retrieval.modes.search import rrf_fuse, vector_search
from kgrag.retrieval.records import ChunkHit, EntityHit, RelationHit, RetrievalContext, Retrieved
from kgrag.retrieval.trace import relation_id
from kgrag.storage.layout import CHUNK_VECTORS, ENTITY_VECTORS, RELATION_VECTORS
from kgrag.storage.layout.typed import TypedGraph

# Near misses listed in the trace past chunk_top_k.
TRACE_MARGIN = 10
# The tuned edge weights (EdgeWeights is frozen: one shared default is safe).
DEFAULT_EDGES = EdgeWeights(leaf=0.05, idf=True, aboutness=10.0)
# The push tolerance of the ppr mode, and the graph size from which it pushes: below it
# 26 sweeps of the exact walk cost a few milliseconds (docs/benchmarks.md, ppr).
PUSH_EPS = 1e-6
PUSH_MIN_EDGES = 100_000


@dataclass(slots=True)
class PPRSettings:
    """Seed weights and walk parameters (chosen by measurement, docs/evaluation.md).

    Seed groups are normalised separately, then scaled: entity seeds
    (vector + name + relation) sum to 1, chunk seeds to ``chunk_weight``.
    Each default was picked with ``scripts/tune_ppr.py`` on HotpotQA and
    kept only when MuSiQue improved too.
    """

    damping: float = 0.7
    entity_seed_k: int = 10  # entity vector hits per search (at most top_k)
    chunk_seed_k: int = 20  # direct chunk hits seeded (at least chunk_top_k)
    vector_weight: float = 1.0  # entity vector hits, rank-weighted 1/(rank + rank_offset)
    name_weight: float = 2.0  # each entity named literally in the question
    relation_weight: float = 3.0  # endpoints of relation vector hits
    chunk_weight: float = 1.0  # direct chunk hits, by fused score
    rank_offset: float = 1.0
    chunk_rank_offset: float = 1.0
    lexical_weight: float = 0.5  # BM25 ranks against dense ranks (1.0) in the chunk seeds
    specificity: float = 0.5
    edges: EdgeWeights = DEFAULT_EDGES
    # Forward push (pagerank.push) settles residuals above push_eps per out-edge, on graphs
    # of at least push_min_edges transitions; smaller ones (or push_eps 0) get the exact walk.
    push_eps: float = PUSH_EPS
    push_min_edges: int = PUSH_MIN_EDGES


SETTINGS = PPRSettings()


def _rank_weights(n: int, offset: float) -> np.ndarray:
    return 1.0 / (np.arange(n) + offset)


async def _entity_seeds(
    ctx: RetrievalContext, graph: PPRGraph, cfg: PPRSettings
) -> dict[int, float]:
    """Entity index -> seed weight, before specificity."""
    p, trace = ctx.param, ctx.trace
    seeds: dict[int, float] = {}
    searches = [("query", ctx.question), ("low", ", ".join(ctx.keywords.low))]
    for slot, text in searches:
        vector = ctx.vectors.get(slot)
        if vector is None or cfg.vector_weight <= 0:
            continue
        hits = await vector_search(
            ctx.storage,
            ENTITY_VECTORS,
            vector,
            min(p.top_k, cfg.entity_seed_k),
            p.cosine_threshold,
            trace,
            route=f"ppr/entities/{slot}",
            kind="entity",
            query=text,
            label=lambda h: str(h.meta.get("name", h.id)),
            gate=hit_gate(ctx.doc_filter, "entity"),
        )
        names = [str(h.meta.get("name", "")) for h in hits]
        for name, w in zip(names, _rank_weights(len(names), cfg.rank_offset), strict=False):
            if name in graph.entity_index:
                i = graph.entity_index[name]
                seeds[i] = seeds.get(i, 0.0) + cfg.vector_weight * float(w)
            else:
                trace.drop("graph", "entity", name, "entity vector has no graph node", route="ppr")
    if cfg.name_weight > 0:
        await _name_seeds(ctx, graph, cfg, seeds)
    if cfg.relation_weight > 0:
        await _relation_seeds(ctx, graph, cfg, seeds)
    return seeds


async def _name_seeds(
    ctx: RetrievalContext, graph: PPRGraph, cfg: PPRSettings, seeds: dict[int, float]
) -> None:
    """Add the entities named literally in the question (those the filter allows) to ``seeds``."""
    names = [graph.entities[i] for i in graph.match_names(ctx.question)]
    for name in await keep_allowed(
        ctx.doc_filter, names, ctx.trace, kind="entity", route="ppr/names"
    ):
        i = graph.entity_index[name]
        seeds[i] = seeds.get(i, 0.0) + cfg.name_weight


async def _relation_seeds(
    ctx: RetrievalContext, graph: PPRGraph, cfg: PPRSettings, seeds: dict[int, float]
) -> None:
    """Add the endpoints of the relations most similar to the question to ``seeds``."""
    hits = await vector_search(
        ctx.storage,
        RELATION_VECTORS,
        ctx.vectors["query"],
        min(ctx.param.top_k, cfg.entity_seed_k),
        ctx.param.cosine_threshold,
        ctx.trace,
        route="ppr/relations",
        kind="relation",
        query=ctx.question,
        label=lambda h: relation_id(str(h.meta.get("src")), str(h.meta.get("tgt"))),
        gate=hit_gate(ctx.doc_filter, "relation"),
    )
    for h, w in zip(hits, _rank_weights(len(hits), cfg.rank_offset), strict=False):
        for end in (h.meta.get("src"), h.meta.get("tgt")):
            i = graph.entity_index.get(str(end))
            if i is not None:
                seeds[i] = seeds.get(i, 0.0) + cfg.relation_weight * float(w) / 2


async def _chunk_seeds(
    ctx: RetrievalContext, graph: PPRGraph, cfg: PPRSettings
) -> dict[int, float]:
    """Chunk node -> seed weight from dense and BM25 search (best first).

    A weighted reciprocal-rank fusion: a chunk at rank r of a list gets
    ``weight / (r + chunk_rank_offset)`` from it (dense weight 1, BM25
    ``lexical_weight``), so a weaker list cannot outvote a stronger one.
    """
    k, p = max(ctx.param.chunk_top_k, cfg.chunk_seed_k), ctx.param
    dense, lexical = await asyncio.gather(
        vector_search(
            ctx.storage,
            CHUNK_VECTORS,
            ctx.vectors["query"],
            k,
            p.cosine_threshold,
            ctx.trace,
            route="ppr/chunks/dense",
            kind="chunk",
            query=ctx.question,
            gate=hit_gate(ctx.doc_filter, "chunk"),
        ),
        lexical_hits(ctx, k if cfg.lexical_weight > 0 else 0, route="ppr/lexical"),
    )
    fused = rrf_fuse(
        [[h.id for h in dense], [c for c, _ in lexical]],
        k=cfg.chunk_rank_offset - 1,
        weights=[1.0, cfg.lexical_weight],
    )
    seeds: dict[int, float] = {}
    for cid, w in fused[:k]:
        if cid in graph.chunk_index:
            seeds[graph.chunk_index[cid]] = w
        else:
            ctx.trace.drop("graph", "chunk", cid, "direct hit not in text_chunks", w, "ppr")
    return seeds


def seed_vector(
    graph: PPRGraph, entity_seeds: dict[int, float], chunk_seeds: dict[int, float], cfg: PPRSettings
) -> np.ndarray:
    """The personalisation vector: entity and chunk groups normalised, then weighted."""
    s = np.zeros(graph.size)
    if entity_seeds:
        idx = np.fromiter(entity_seeds, dtype=np.int64)
        w = np.fromiter(entity_seeds.values(), dtype=np.float64)
        w /= np.maximum(graph.entity_chunks[idx], 1) ** cfg.specificity
        s[idx] = w / w.sum()
    if chunk_seeds and cfg.chunk_weight > 0:
        idx = np.fromiter(chunk_seeds, dtype=np.int64)
        w = np.fromiter(chunk_seeds.values(), dtype=np.float64)
        s[idx] += cfg.chunk_weight * w / w.sum() if entity_seeds else w / w.sum()
    return s


def _trace_seeds(ctx: RetrievalContext, graph: PPRGraph, s: np.ndarray) -> None:
    n_e = len(graph.entities)
    order = np.argsort(-s)
    ents = [
        {"id": graph.entities[i], "score": round(float(s[i]), 5)}
        for i in order
        if i < n_e and s[i] > 0
    ]
    chunks = [
        {"id": graph.chunks[i - n_e], "score": round(float(s[i]), 5)}
        for i in order
        if i >= n_e and s[i] > 0
    ]
    ctx.trace.candidates("ppr/seeds", "entity", ents, query=ctx.question)
    ctx.trace.candidates("ppr/seeds", "chunk", chunks, query=ctx.question)


def _top(scores: np.ndarray, n: int, first: list[int] | None = None) -> np.ndarray:
    """Indexes of the ``n`` largest positive scores, best first.

    Scores equal to 12 decimals tie; ties go to the index earlier in
    ``first``, then to the lower index.
    """
    positive = np.flatnonzero(scores > 0)  # a walk's mass is mostly zeros: rank the rest
    n = min(n, len(positive))
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    rounded = np.round(scores[positive], 12)
    cut = np.partition(rounded, len(rounded) - n)[len(rounded) - n]
    keep = rounded >= cut
    part, values = positive[keep], rounded[keep]
    where = {j: r for r, j in enumerate(first or ())}
    rank = np.array([where.get(int(j), len(where)) for j in part], dtype=np.int64)
    best: np.ndarray = part[np.lexsort((part, rank, -values))][:n]
    return best


def _allowed_chunk_mass(ctx: RetrievalContext, graph: PPRGraph, mass: np.ndarray) -> np.ndarray:
    """The chunks' mass, zero for those the filter does not allow (traced when they would have ranked)."""
    flt, chunk_mass = ctx.doc_filter, mass[len(graph.entities) :]
    if not flt.is_active:
        return chunk_mass
    allowed = np.fromiter(
        (flt.allows_chunk_id(c) for c in graph.chunks), dtype=bool, count=len(graph.chunks)
    )
    if ctx.trace.enabled:
        for j in _top(chunk_mass, ctx.param.chunk_top_k):
            if not allowed[j]:
                cid = graph.chunks[j]
                ctx.trace.drop(
                    "filter", "chunk", cid, flt.chunk_reason(cid), float(chunk_mass[j]), "ppr"
                )
    return np.where(allowed, chunk_mass, 0.0)


def _rank_chunks(
    ctx: RetrievalContext, graph: PPRGraph, mass: np.ndarray, direct: list[int]
) -> list[ChunkHit]:
    """The ``chunk_top_k`` allowed chunks by mass (ties in direct-search order); near misses traced."""
    n_e, k, trace = len(graph.entities), ctx.param.chunk_top_k, ctx.trace
    chunk_mass = _allowed_chunk_mass(ctx, graph, mass)
    order = _top(chunk_mass, k + (TRACE_MARGIN if trace.enabled else 0), [j - n_e for j in direct])
    hits = [ChunkHit(graph.chunks[j], float(chunk_mass[j]), "ppr") for j in order]
    if trace.enabled:
        trace.candidates(
            "ppr/chunks", "chunk", [{"id": h.id, "score": round(h.score, 6)} for h in hits]
        )
        for h in hits[k:]:
            trace.drop(
                "retrieval",
                "chunk",
                h.id,
                f"PageRank mass ranked past chunk_top_k {k}",
                h.score,
                "ppr",
            )
    return hits[:k]


async def _graph_items(
    ctx: RetrievalContext, graph: PPRGraph, mass: np.ndarray
) -> tuple[list[EntityHit], list[RelationHit]]:
    """The ``top_k`` allowed entities by PageRank mass, and the allowed relations among them."""
    n_e = len(graph.entities)
    top = await _top_entities(ctx, graph, mass)
    names = [graph.entities[i] for i in top]
    nodes = await TypedGraph(ctx.storage.graph).nodes(names)
    entities = [
        EntityHit(
            graph.entities[i], nodes[graph.entities[i]], float(mass[i]), graph.degree(int(i)), "ppr"
        )
        for i in top
        if graph.entities[i] in nodes
    ]
    keep = np.zeros(n_e, dtype=bool)
    keep[top] = True
    pairs = (
        graph.ee_pairs[keep[graph.ee_pairs[:, 0]] & keep[graph.ee_pairs[:, 1]]]
        if n_e
        else graph.ee_pairs
    )
    pair_mass = mass[pairs[:, 0]] + mass[pairs[:, 1]] if len(pairs) else np.zeros(0)
    wanted = len(pairs) if ctx.doc_filter.is_active else ctx.param.top_k
    chosen = pairs[_top(pair_mass, wanted)] if len(pairs) else pairs
    keys = [(graph.entities[a], graph.entities[b]) for a, b in chosen]
    keys = [(a, b) if a <= b else (b, a) for a, b in keys]
    edges = await TypedGraph(ctx.storage.graph).edges(keys)
    keys = [k for k in keys if k in edges]
    keys = (await keep_allowed(ctx.doc_filter, keys, ctx.trace, kind="relation", route="ppr"))[
        : ctx.param.top_k
    ]
    relations = [
        RelationHit(
            a,
            b,
            edges[(a, b)],
            float(mass[graph.entity_index[a]] + mass[graph.entity_index[b]]),
            0,
            "ppr",
        )
        for a, b in keys
    ]
    return entities, relations


async def _top_entities(ctx: RetrievalContext, graph: PPRGraph, mass: np.ndarray) -> np.ndarray:
    """Indexes of the ``top_k`` allowed entities by mass (judged in windows widened by ``OVERFETCH``)."""
    n_e, k, flt = len(graph.entities), ctx.param.top_k, ctx.doc_filter
    if not flt.is_active:
        return _top(mass[:n_e], k)
    size = k * OVERFETCH
    for _ in range(MAX_WIDENINGS):
        top = _top(mass[:n_e], size)
        names = [graph.entities[i] for i in top]
        ok = await flt.allowed_keys(names)
        kept = [int(i) for i, name in zip(top, names, strict=False) if name in ok]
        if len(kept) >= k or len(top) < size:
            break
        size *= OVERFETCH
    if ctx.trace.enabled:
        for i, name in zip(top[:k], names[:k], strict=False):
            if name not in ok:
                ctx.trace.drop(
                    "filter", "entity", name, flt.key_reason(name), float(mass[i]), "ppr"
                )
    return np.array(kept[:k], dtype=np.int64)


def _walk(graph: PPRGraph, s: np.ndarray, cfg: PPRSettings) -> np.ndarray:
    """PageRank mass from the seeds ``s``: pushed on large graphs, exact on small ones."""
    edges = len(graph.transition(cfg.edges).dst)
    if cfg.push_eps > 0 and edges >= cfg.push_min_edges:
        return graph.push(s, cfg.damping, cfg.edges, cfg.push_eps)
    return graph.walk(s, cfg.damping, cfg.edges)


async def ppr(ctx: RetrievalContext, cfg: PPRSettings | None = None) -> Retrieved:
    """Retrieve by personalised PageRank from the question's entities and chunks."""
    given = ctx.extras.get("ppr")
    cfg = cfg or (given if isinstance(given, PPRSettings) else None) or SETTINGS
    started = time.perf_counter()
    graph, built = await cached_graph(ctx.storage)
    if built:
        ctx.trace.note(
            "retrieval",
            f"ppr graph loaded: {len(graph.entities)} entities, {len(graph.chunks)} "
            f"chunks in {time.perf_counter() - started:.2f}s",
        )
    entity_seeds, chunk_seeds = await asyncio.gather(
        _entity_seeds(ctx, graph, cfg), _chunk_seeds(ctx, graph, cfg)
    )
    s = seed_vector(graph, entity_seeds, chunk_seeds, cfg)
    if not s.any():
        ctx.trace.note("retrieval", "ppr: no seed entity or chunk found")
        return Retrieved(graph_chunks=False)
    if ctx.trace.enabled:
        _trace_seeds(ctx, graph, s)
    mass = _walk(graph, s, cfg)
    chunks = _rank_chunks(ctx, graph, mass, list(chunk_seeds))
    entities, relations = await _graph_items(ctx, graph, mass)
    return Retrieved(entities, relations, chunks, graph_chunks=False)


register_mode("ppr", ppr, vectors={"query", "low"})
