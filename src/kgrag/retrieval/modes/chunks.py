"""Chunk routes: direct search, chunks reached through the graph, selection.

- :func:`direct_chunks`: chunk vectors (top ``chunk_top_k``), fused by
  reciprocal-rank fusion with BM25 hits when the store has a lexical index;
- :func:`graph_chunks`: the source chunks of entities and relations, up to
  ``related_chunk_number`` per item, ranked by cosine similarity to the
  question (vectors read in one batch);
- :func:`select_chunks`: round-robin merge of the routes, optional rerank,
  ``chunk_top_k``, and reading the chunk texts.

Every route keeps only the chunks ``ctx.doc_filter`` allows: searches
over-fetch to fill their budgets, graph source chunks are filtered by id,
and each chunk read is checked against its documents once more.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from kgrag.errors import StorageError
from kgrag.retrieval.filter.documents import MAX_WIDENINGS, OVERFETCH, DocFilter, Key, hit_gate
from kgrag.retrieval.keywords.heuristic import search_text
from kgrag.retrieval.modes.search import round_robin, rrf_fuse, vector_search
from kgrag.retrieval.records import ChunkHit, EntityHit, RelationHit, RetrievalContext, as_list
from kgrag.retrieval.trace import Trace
from kgrag.storage.layout import CHUNK_VECTORS, CHUNKS
from kgrag.storage.layout.rows import ChunkRow
from kgrag.storage.layout.typed import TypedKV

if TYPE_CHECKING:
    from kgrag.llm.service import RerankService
    from kgrag.storage.base import LexicalIndex

log = logging.getLogger(__name__)

# Source chunks considered per entity / relation (the first ones stored).
MAX_SOURCES_PER_ITEM = 64


async def direct_chunks(ctx: RetrievalContext) -> list[ChunkHit]:
    """Chunks similar to the question, fused with BM25 hits when there are any."""
    p, trace = ctx.param, ctx.trace
    dense, lexical = await asyncio.gather(
        vector_search(
            ctx.storage,
            CHUNK_VECTORS,
            ctx.vectors["query"],
            p.chunk_top_k,
            p.cosine_threshold,
            trace,
            route="chunks",
            kind="chunk",
            query=ctx.question,
            gate=hit_gate(ctx.doc_filter, "chunk"),
        ),
        lexical_hits(ctx, p.chunk_top_k),
    )
    if not lexical:
        return [ChunkHit(h.id, float(h.score), "vector") for h in dense]
    dense_ids = [h.id for h in dense]
    lex_ids = [cid for cid, _ in lexical]
    routes = {cid: "vector" for cid in dense_ids}
    for cid in lex_ids:
        routes[cid] = "vector+lexical" if cid in routes else "lexical"
    fused = rrf_fuse([dense_ids, lex_ids])
    if trace.enabled:
        trace.candidates("chunks/rrf", "chunk", [{"id": c, "score": round(s, 5)} for c, s in fused])
    return [ChunkHit(cid, score, routes[cid]) for cid, score in fused]


async def lexical_hits(
    ctx: RetrievalContext, k: int, route: str = "lexical"
) -> list[tuple[str, float]]:
    """The ``k`` best BM25 chunks for the question that the filter allows.

    None without a lexical index or when it fails.
    """
    index = ctx.storage.lexical
    if index is None or k <= 0:
        return []
    text = search_text(ctx.question)
    try:
        hits, refused = await _lexical_search(index, text, k, ctx.doc_filter)
    except StorageError as exc:
        log.warning("lexical search failed, using vector hits only: %s", exc)
        ctx.trace.note("retrieval", f"lexical search failed ({route}): {exc}")
        return []
    ctx.trace.candidates(
        route, "chunk", [{"id": c, "score": round(float(s), 4)} for c, s in hits], query=text
    )
    for cid, score in refused:
        ctx.trace.drop("filter", "chunk", cid, ctx.doc_filter.chunk_reason(cid), score, route)
    return hits


async def _lexical_search(
    index: LexicalIndex, text: str, k: int, flt: DocFilter
) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """(the ``k`` best allowed hits, the refused hits ranked above the last of them).

    While a filter is active and fewer than ``k`` hits pass, the index is
    asked again for ``OVERFETCH`` times as many (at most ``MAX_WIDENINGS`` times).
    """
    if not flt.is_active:
        return await index.search(text, k), []
    asked = k
    for _ in range(MAX_WIDENINGS + 1):
        hits = await index.search(text, asked)
        kept = [(c, s) for c, s in hits if flt.allows_chunk_id(c)]
        if len(kept) >= k or len(hits) < asked:
            break
        asked *= OVERFETCH
    kept = kept[:k]
    floor = kept[-1][1] if len(kept) >= k else float("-inf")
    return kept, [(c, s) for c, s in hits if not flt.allows_chunk_id(c) and s >= floor]


def _pick(ids: list[str], sims: dict[str, float], n: int, taken: set[str]) -> list[str]:
    """The ``n`` ids most similar to the question, skipping ones already taken."""
    ranked = sorted((i for i in ids if i in sims and i not in taken), key=lambda i: -sims[i])
    return ranked[:n]


async def graph_chunks(
    ctx: RetrievalContext, entities: list[EntityHit], relations: list[RelationHit]
) -> tuple[list[ChunkHit], list[ChunkHit]]:
    """(entity chunks, relation chunks), each ranked by similarity to the question."""
    n = ctx.param.related_chunk_number
    if n <= 0 or (not entities and not relations):
        return [], []
    trace, flt = ctx.trace, ctx.doc_filter
    e_ids = [_sources(flt, e.name, e.data) for e in entities]
    r_ids = [_sources(flt, r.key, r.data) for r in relations]
    wanted = list(dict.fromkeys(i for ids in (*e_ids, *r_ids) for i in ids))
    vectors = await ctx.storage.vectors(CHUNK_VECTORS).get_vectors(wanted)
    sims = _similarities(vectors, ctx.vectors["query"])
    if flt.is_active:
        _note_filtered_sources(trace, flt, [*entities, *relations])
    for cid in wanted:
        if cid not in sims:
            trace.drop(
                "graph",
                "chunk",
                cid,
                "source chunk id has no chunk vector (deleted or not indexed)",
            )
    out = []
    for route, id_lists in (("entity", e_ids), ("relation", r_ids)):
        taken: set[str] = set()
        for ids in id_lists:  # one list per entity / relation, best ranked first
            taken.update(_pick(ids, sims, n, taken))
        hits = sorted(
            (ChunkHit(cid, sims[cid], route) for cid in taken), key=lambda c: (-c.score, c.id)
        )
        if trace.enabled:
            trace.candidates(
                f"{route}/chunks", "chunk", [{"id": c.id, "score": round(c.score, 4)} for c in hits]
            )
        out.append(hits)
    return out[0], out[1]


def _sources(flt: DocFilter, key: Key, data: Mapping[str, object]) -> list[str]:
    """The first source chunks of an entity / relation that the filter allows.

    ``source_ids`` is capped when stored: when none of the kept ones is
    allowed, the allowed chunks of the uncapped support stand in.
    """
    ids = as_list(data.get("source_ids"))
    if flt.is_active:
        ids = [i for i in ids if flt.allows_chunk_id(i)] or flt.allowed_support(key)
    return ids[:MAX_SOURCES_PER_ITEM]


def _note_filtered_sources(
    trace: Trace, flt: DocFilter, items: list[EntityHit | RelationHit]
) -> None:
    """One note for the source chunks of kept items that the filter removed (they can be many)."""
    if not trace.enabled:
        return
    refused = {
        i
        for item in items
        for i in as_list(item.data.get("source_ids"))
        if not flt.allows_chunk_id(i)
    }
    if refused:
        trace.note(
            "filter",
            f"{len(refused)} source chunk(s) of the kept entities and relations "
            "filtered out (document not selected or disabled)",
        )


def _similarities(vectors: dict[str, np.ndarray], query: np.ndarray) -> dict[str, float]:
    if not vectors:
        return {}
    ids = list(vectors)
    matrix = np.stack([np.asarray(vectors[i], dtype=np.float32) for i in ids])
    scores = matrix @ np.asarray(query, dtype=np.float32)
    return {i: float(s) for i, s in zip(ids, scores, strict=False)}


async def _load(ctx: RetrievalContext, hits: list[ChunkHit]) -> list[ChunkHit]:
    """Fill in the texts of ``hits``; drop (and trace) ids missing from ``text_chunks`` or filtered out."""
    todo = [h for h in hits if not h.loaded]
    chunks = TypedKV(ctx.storage.kv(CHUNKS), ChunkRow)
    rows = await chunks.get_many([h.id for h in todo]) if todo else []
    for hit, row in zip(todo, rows, strict=False):
        if row is None:
            ctx.trace.drop("graph", "chunk", hit.id, "chunk id not found in text_chunks")
        elif not ctx.doc_filter.allows_chunk(row):
            ctx.trace.drop(
                "filter", "chunk", hit.id, ctx.doc_filter.chunk_reason(hit.id), hit.score, hit.route
            )
        else:
            hit.content = str(row.get("content", ""))
            hit.file_path = str(row.get("file_path") or "unknown_source")
            hit.doc_id = str(row.get("doc_id") or "")
            hit.location = dict(row.get("location") or {})  # for reference lines
            hit.loaded = True
    return [h for h in hits if h.loaded]


async def select_chunks(
    ctx: RetrievalContext, routes: list[list[ChunkHit]], rerank: RerankService | None
) -> tuple[list[ChunkHit], int]:
    """Merge the routes round-robin, rerank if asked, keep ``chunk_top_k`` and read their texts.

    Returns the kept chunks and how many ``chunk_top_k`` cut.
    """
    p, trace = ctx.param, ctx.trace
    merged = round_robin(routes, key=lambda c: c.id)
    if merged and rerank is not None and p.enable_rerank and p.chunk_top_k > 0:
        merged = await _rerank(ctx, await _load(ctx, merged), rerank)
    kept: list[ChunkHit] = []
    rest = merged
    while rest and len(kept) < p.chunk_top_k:
        need = p.chunk_top_k - len(kept)
        kept += await _load(ctx, rest[:need])
        rest = rest[need:]
    for c in rest:
        trace.drop(
            "truncation",
            "chunk",
            c.id,
            f"past chunk_top_k {p.chunk_top_k} (route {c.route})",
            c.score,
        )
    return kept, len(rest)


async def _rerank(
    ctx: RetrievalContext, chunks: list[ChunkHit], rerank: RerankService
) -> list[ChunkHit]:
    if not chunks:
        return chunks
    order = await rerank.rerank(ctx.question, [c.content for c in chunks], ctx.param.chunk_top_k)
    ranked: list[ChunkHit] = []
    seen: set[int] = set()
    for index, score in order:
        if 0 <= index < len(chunks) and index not in seen:
            seen.add(index)
            chunks[index].score = float(score)
            ranked.append(chunks[index])
    for i, c in enumerate(chunks):
        if i not in seen:
            ctx.trace.drop("rerank", "chunk", c.id, "not among the reranker's top results", c.score)
    ctx.trace.candidates(
        "rerank", "chunk", [{"id": c.id, "score": round(c.score, 4)} for c in ranked]
    )
    return ranked
