"""The ``auto`` query mode: chunk search, the graph, or both fused, chosen per question.

Three rankings are on offer: chunk search (mode ``naive``: chunk vectors
fused with BM25), the graph walk (mode ``ppr``) and the path search (mode
``path``: chains of relations between the question's entities).
:func:`choose_route` weighs them from signals that cost no model call
(:mod:`kgrag.retrieval.modes.auto_signals`):

- **reach of the index's names.** The share of the index a name leads
  to: about 1% in a collection of passages, 18% in a novel. The walk
  ranks chunks by the names they share with the question's; where names
  are specific to a few passages that points at the passage, where a
  handful of characters run through the whole text it points everywhere.
  Up to ``low_reach`` the graph gets its full weight, from ``high_reach``
  none, linearly between.
- **entities named.** A question naming no entity of the graph gives it
  nothing to start from but what chunk search finds: ``unnamed_weight`` of
  the weight above (chunk search alone by default).

With the graph's full weight the walk and the path search are fused, the
path search weighing ``path_weight``; with part of it chunk search and the
walk. So at most two routes run, each as its own mode would, and their
chunk lists (the first ``chunk_top_k`` of each) are merged by weighted
reciprocal-rank fusion; entities and relations are merged in turn, paths
come from the path search. The defaults are measured with
``scripts/eval_auto.py`` (docs/evaluation.md, "Mode auto"). The trace
notes the route and its reasons, and its ``auto`` entry holds them as data.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable
from dataclasses import dataclass

from kgrag.knowledge.walk.matrix import cached_graph
from kgrag.retrieval.modes.auto_signals import Signals, question_signals
from kgrag.retrieval.modes.chunks import direct_chunks
from kgrag.retrieval.modes.ppr import ppr
from kgrag.retrieval.modes.registry import get_mode, register_mode
from kgrag.retrieval.modes.search import round_robin, rrf_fuse
from kgrag.retrieval.records import ChunkHit, RetrievalContext, Retrieved

CHUNKS, WALK, PATH = "chunks", "walk", "path"


@dataclass(frozen=True, slots=True)
class AutoSettings:
    """How the routes' weights follow the signals (see the module docstring)."""

    low_reach: float = 0.04  # name reach up to which the graph weighs fully
    high_reach: float = 0.12  # and from which it does not weigh at all
    unnamed_weight: float = 0.0  # share of that weight for a question naming no entity
    path_weight: float = 0.25  # the path search's share beside the walk (0: the walk alone)
    rrf_k: float = 1.0  # fusion: a chunk at 0-based rank r gets weight / (rrf_k + r + 1)


SETTINGS = AutoSettings()


@dataclass(frozen=True, slots=True)
class Route:
    """The routes to run with their weights (summing to 1, best first in ties) and why."""

    parts: tuple[tuple[str, float], ...]
    reason: str

    @property
    def name(self) -> str:
        """``chunks``, ``walk``, ``walk+path`` or ``chunks+walk``."""
        return "+".join(part for part, _ in self.parts)

    @property
    def graph_weight(self) -> float:
        """The weight of the graph's routes together (0: chunk search only)."""
        return sum(w for part, w in self.parts if part != CHUNKS)


def reach_weight(reach: float, cfg: AutoSettings) -> float:
    """The graph's weight on an index whose name reach is ``reach``."""
    if reach <= cfg.low_reach:
        return 1.0
    if reach >= cfg.high_reach:
        return 0.0
    return (cfg.high_reach - reach) / (cfg.high_reach - cfg.low_reach)


def _parts(graph: float, cfg: AutoSettings) -> tuple[tuple[str, float], ...]:
    """The weighted routes for the graph's weight ``graph``."""
    if graph <= 0:
        return ((CHUNKS, 1.0),)
    if graph < 1:
        return ((CHUNKS, 1.0 - graph), (WALK, graph))
    if cfg.path_weight <= 0:
        return ((WALK, 1.0),)
    return ((WALK, 1.0 - cfg.path_weight), (PATH, cfg.path_weight))


def choose_route(signals: Signals, cfg: AutoSettings = SETTINGS) -> Route:
    """The route of a question with ``signals``."""
    weight = reach_weight(signals.reach, cfg)
    reach = f"names reach {signals.reach:.1%} of the chunks"
    if weight <= 0:
        return Route(_parts(0.0, cfg), f"{reach} (the walk would spread over the index)")
    if not signals.names:
        unnamed = weight * cfg.unnamed_weight
        return Route(_parts(unnamed, cfg), f"the question names no entity; {reach}")
    n = len(signals.names)
    shown = ", ".join(signals.names[:3]) + (", ..." if n > 3 else "")
    named = f"{n} entit{'y' if n == 1 else 'ies'} ({shown})"
    return Route(_parts(weight, cfg), f"the question names {named}; {reach}")


def fuse_chunks(
    rankings: list[tuple[list[ChunkHit], float]], k: float, limit: int
) -> list[ChunkHit]:
    """The first ``limit`` chunks by weighted reciprocal rank over the first ``limit`` of each ranking.

    Ties go to the earlier ranking's order; a chunk several rankings hold
    keeps the earliest one's hit, its route naming every route that found it.
    """
    lists = [hits[:limit] for hits, _ in rankings]
    fused = rrf_fuse(
        [[c.id for c in hits] for hits in lists], k=k, weights=[w for _, w in rankings]
    )
    found: dict[str, list[ChunkHit]] = {}
    for hits in lists:
        for hit in hits:
            found.setdefault(hit.id, []).append(hit)
    out = []
    for cid, score in fused[:limit]:
        route = "+".join(dict.fromkeys(h.route for h in found[cid]))
        out.append(dataclasses.replace(found[cid][0], score=score, route=route))
    return out


async def _run(ctx: RetrievalContext, part: str) -> Retrieved:
    """What one route retrieves."""
    if part == CHUNKS:
        return Retrieved(chunks=await direct_chunks(ctx), graph_chunks=False)
    if part == WALK:
        return await ppr(ctx)
    retrieve = get_mode(PATH).retrieve
    assert retrieve is not None
    return await retrieve(ctx)


def _merged(ctx: RetrievalContext, route: Route, found: list[Retrieved], k: float) -> Retrieved:
    """One :class:`Retrieved` from the routes' finds (chunks fused, the rest interleaved)."""
    rankings = [(f.chunks, w) for f, (_, w) in zip(found, route.parts, strict=True)]
    chunks = fuse_chunks(rankings, k, ctx.param.chunk_top_k)
    if ctx.trace.enabled:
        items = [{"id": c.id, "score": round(c.score, 5)} for c in chunks]
        ctx.trace.candidates(f"auto/{route.name}", "chunk", items, query=ctx.question)
    return Retrieved(
        round_robin([f.entities for f in found], key=lambda e: e.name),
        round_robin([f.relations for f in found], key=lambda r: r.key),
        chunks,
        graph_chunks=False,
        paths=[p for f in found for p in f.paths],
    )


def _trace_route(ctx: RetrievalContext, route: Route, signals: Signals) -> None:
    weight = f"graph weight {route.graph_weight:.2f}"
    ctx.trace.note("retrieval", f"auto: {route.name} ({weight}): {route.reason}")
    ctx.trace.set(
        "auto",
        {
            "route": route.name,
            "weights": {part: round(w, 3) for part, w in route.parts},
            "names": list(signals.names),
            "reach": round(signals.reach, 4),
        },
    )


async def auto(ctx: RetrievalContext, cfg: AutoSettings | None = None) -> Retrieved:
    """Retrieve by the routes :func:`choose_route` picks for the question, fused."""
    given = ctx.extras.get("auto")
    cfg = cfg or (given if isinstance(given, AutoSettings) else None) or SETTINGS
    graph, _ = await cached_graph(ctx.storage)
    signals = await question_signals(ctx, graph)
    route = choose_route(signals, cfg)
    _trace_route(ctx, route, signals)
    runs: list[Awaitable[Retrieved]] = [_run(ctx, part) for part, _ in route.parts]
    found = list(await asyncio.gather(*runs))
    if len(found) == 1:
        return found[0]
    return _merged(ctx, route, found, cfg.rrf_k)


register_mode("auto", auto, vectors={"query", "low", "high"})
