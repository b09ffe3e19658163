"""From a question to a budgeted context: keywords, embeddings, routes, sections.

:func:`assemble` runs the stages every retrieving mode shares::

    document filter -> keywords -> one embedding call -> the mode's routes -> entity / relation
    budgets -> chunks of the kept entities and relations -> merge, rerank,
    chunk_top_k -> chunk budget -> references and context text

The conditions stage (:mod:`kgrag.retrieval.conditions`) reads the question's
constraints while the routes run, drops conflicting entities and relations
before their budgets and conflicting chunks before theirs, and ends the
context with what it found missing.

Embedding the question is bounded (``Services.embed_timeout``; not for an
in-process model, whose first call loads it) and retried twice at most
(:data:`QUERY_RETRY`): when the embedding service fails or does not
answer in time, the question is
searched in the lexical (BM25) index alone, and ``Assembly.note`` (and
the trace) say so; without a lexical index the failure is raised.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kgrag.errors import ModelError, QueryError
from kgrag.llm.failures import public_reason
from kgrag.llm.local import LocalEmbedder
from kgrag.llm.retry import RetryPolicy
from kgrag.retrieval.answer.messages import answer_messages, render_prompt
from kgrag.retrieval.conditions.render import Final
from kgrag.retrieval.conditions.stage import (
    Conditions,
    read_conditions,
    screen_chunks,
    screen_found,
)
from kgrag.retrieval.context.numbered import number_context
from kgrag.retrieval.context.numbering import ItemNumbers
from kgrag.retrieval.context.paths import (
    fit_paths,
    numbered_lines,
    path_budget,
    path_reserve,
    with_paths,
)
from kgrag.retrieval.context.sections import (
    BUFFER_TOKENS,
    Fitted,
    SectionBudget,
    entity_line,
    entity_name,
    fit,
    fit_chunks,
    relation_line,
    relation_name,
    skeleton_tokens,
)
from kgrag.retrieval.filter.documents import NO_FILTER, DocFilter, build_filter
from kgrag.retrieval.keywords.source import KeywordSet, question_keywords
from kgrag.retrieval.modes.chunks import graph_chunks, lexical_hits, select_chunks
from kgrag.retrieval.modes.registry import ModeSpec
from kgrag.retrieval.param import QueryParam
from kgrag.retrieval.records import (
    ChunkHit,
    EntityHit,
    PathHit,
    RelationHit,
    RetrievalContext,
    Retrieved,
)
from kgrag.retrieval.shapes import FilterData, ReferenceData
from kgrag.retrieval.trace import Trace

if TYPE_CHECKING:
    from kgrag.llm.embedding import EmbeddingService
    from kgrag.llm.service import ChatService, RerankService
    from kgrag.llm.tokenizer import Tokenizer
    from kgrag.storage.base import Storage

log = logging.getLogger(__name__)

# How embedding the question retries: a few quick tries (a refused connection
# is given up on in about a second), all within ``Services.embed_timeout``.
QUERY_RETRY = RetryPolicy(max_retries=2, base=0.25, cap=1.0)


@dataclass(slots=True)
class Services:
    """The parts a query uses; ``chat`` and ``rerank`` may be None.

    ``language`` is the index's language (keywords are asked for in it);
    ``embed_timeout`` the seconds embedding the question may take before
    the lexical index alone is searched (None: no bound).
    """

    storage: Storage
    chat: ChatService | None
    embed: EmbeddingService | None
    rerank: RerankService | None
    tokenizer: Tokenizer
    language: str = "English"
    embed_timeout: float | None = None


@dataclass(slots=True)
class Assembly:
    """The outcome of retrieval: ``status`` is ok, no_keywords or no_context."""

    status: str
    keywords: KeywordSet
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    entities: list[EntityHit] = field(default_factory=list)
    relations: list[RelationHit] = field(default_factory=list)
    chunks: list[ChunkHit] = field(default_factory=list)
    chunk_refs: list[str] = field(default_factory=list)  # each chunk's reference number
    references: list[ReferenceData] = field(default_factory=list)  # Reference.to_dict() by number
    context: str = ""
    tokens: dict[str, int] = field(default_factory=dict)
    truncated: dict[str, int] = field(default_factory=dict)
    filter: FilterData | None = None  # the document filter applied (DocFilter.describe())
    numbers: ItemNumbers = field(
        default_factory=ItemNumbers
    )  # see kgrag.retrieval.context.numbering
    doc_filter: DocFilter = field(default_factory=lambda: NO_FILTER)
    conditions: Conditions = field(default_factory=Conditions)  # see kgrag.retrieval.conditions
    paths: list[PathHit] = field(default_factory=list)  # see kgrag.retrieval.context.paths
    path_lines: list[str] = field(default_factory=list)
    note: str | None = None  # why retrieval was narrowed (lexical only: the embedder failed)

    @property
    def graph(self) -> bool:
        """Whether the context holds graph data (picks the answer prompt's wording)."""
        return bool(self.entities or self.relations)


def _vector_texts(question: str, kws: KeywordSet, spec: ModeSpec, trace: Trace) -> dict[str, str]:
    """Text to embed per slot; a missing keyword level borrows the other one."""
    texts = {"query": question}
    for slot, own, other, label in (
        ("low", kws.low, kws.high, "low"),
        ("high", kws.high, kws.low, "high"),
    ):
        if slot not in spec.vectors:
            continue
        words = own or other
        if words and not own:
            trace.note(
                "keywords", f"no {label}-level keywords: that route searched the other level's"
            )
        if words:
            texts[slot] = ", ".join(words)
    return texts


async def embed_question(
    embed: EmbeddingService | None, texts: dict[str, str]
) -> dict[str, np.ndarray]:
    """Every text in one embedding call (identical texts embedded once)."""
    if embed is None:
        raise QueryError("no embedding service configured; retrieval needs one")
    unique = list(dict.fromkeys(texts.values()))
    matrix = np.asarray(await embed.embed(unique, kind="query"), dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != len(unique):
        raise QueryError(f"embedding service returned shape {matrix.shape} for {len(unique)} texts")
    rows = {text: matrix[i] for i, text in enumerate(unique)}
    return {slot: rows[text] for slot, text in texts.items()}


def _reason(kind: str, own_limit: str, own: int, budget: int, p: QueryParam) -> str:
    if budget >= own:
        return f"{own_limit} {own} exhausted ({kind} section budget)"
    return (
        f"max_total_tokens {p.max_total_tokens} exhausted ({kind} section got {budget} tokens "
        f"after the prompt, question and other sections)"
    )


def _fit_graph(
    found_e: list[EntityHit],
    found_r: list[RelationHit],
    room: int,
    p: QueryParam,
    svc: Services,
    trace: Trace,
    reserve: int = 0,
) -> tuple[Fitted, Fitted]:
    """Entities, then relations in what is left; ``reserve`` tokens of the relations' are kept for paths."""
    e_budget = max(min(p.max_entity_tokens, room), 0)
    ents = fit(
        found_e,
        entity_line,
        SectionBudget(
            e_budget, _reason("entity", "max_entity_tokens", p.max_entity_tokens, e_budget, p)
        ),
        svc.tokenizer,
        trace,
        "entity",
        entity_name,
    )
    r_budget = max(min(p.max_relation_tokens, room - ents.tokens) - reserve, 0)
    reason = _reason(
        "relation", "max_relation_tokens", p.max_relation_tokens, r_budget + reserve, p
    )
    rels = fit(
        found_r,
        relation_line,
        SectionBudget(r_budget, reason + (f"; {reserve} kept for paths" if reserve else "")),
        svc.tokenizer,
        trace,
        "relation",
        relation_name,
    )
    return ents, rels


def bare_prompt_tokens(tokenizer: Tokenizer, question: str, param: QueryParam) -> int:
    """Tokens of the answer prompt with an empty context (the larger of its two wordings)."""
    return max(
        tokenizer.count(render_prompt(answer_messages(question, "", param, graph)))
        for graph in (True, False)
    )


async def _chunk_section(
    ctx: RetrievalContext, svc: Services, found: Retrieved, ents: Fitted, rels: Fitted, budget: int
) -> tuple[Fitted, int]:
    """Chunks of every route that fit ``budget``, and how many chunk_top_k cut."""
    routes = [found.chunks]
    if found.graph_chunks:
        routes += list(await graph_chunks(ctx, ents.items, rels.items))
    selected, cut = await select_chunks(ctx, routes, svc.rerank)
    selected = screen_chunks(ctx, selected)
    reason = f"max_total_tokens {ctx.param.max_total_tokens} exhausted (chunk section got {budget} tokens)"
    return fit_chunks(selected, SectionBudget(budget, reason), svc.tokenizer, ctx.trace), cut


@dataclass(slots=True)
class _Found:
    """What the routes retrieved, screened by the question's conditions."""

    ctx: RetrievalContext
    found: Retrieved
    conds: Conditions


async def assemble(
    svc: Services, question: str, param: QueryParam, spec: ModeSpec, trace: Trace
) -> Assembly:
    """Retrieve for ``question`` in mode ``spec`` and build the budgeted context."""
    doc_filter = await build_filter(svc.storage, param)
    applied = doc_filter.describe()
    trace.set("filter", applied)
    kws = (
        await question_keywords(
            question, param.hl_keywords, param.ll_keywords, svc.chat, svc.language
        )
        if spec.keywords
        else KeywordSet(source="unused")
    )
    trace.set("keywords", kws.to_dict())
    if spec.keywords and kws.empty:
        trace.note("keywords", "no keywords: nothing was searched")
        return Assembly("no_keywords", kws, filter=applied)
    vectors, note = await _question_vectors(svc, _vector_texts(question, kws, spec, trace), trace)
    ctx = RetrievalContext(svc.storage, question, param, kws, vectors, trace, doc_filter)
    got = await _retrieve(svc, ctx, spec if note is None else _LEXICAL)
    asm = await _budgeted(svc, got, applied)
    asm.note = note
    return asm


async def _question_vectors(
    svc: Services, texts: dict[str, str], trace: Trace
) -> tuple[dict[str, np.ndarray], str | None]:
    """The question's vectors; none, with a note, when the embedder fails and BM25 can stand in."""
    try:
        async with asyncio.timeout(_embed_bound(svc)):
            embed = svc.embed.retrying(QUERY_RETRY) if svc.embed is not None else None
            return await embed_question(embed, texts), None
    except (ModelError, TimeoutError) as exc:
        if svc.storage.lexical is None:
            raise
        reason = public_reason(exc, "the embedding service", svc.embed_timeout)
        who = getattr(svc.embed, "identity", "embedder")
        log.warning("%s; BM25 alone is searched (%s: %r)", reason, who, exc)
        note = f"{reason}, so only the lexical (BM25) index was searched"
        trace.note("retrieval", note)
        return {}, note


def _embed_bound(svc: Services) -> float | None:
    """The bound on embedding the question; none for a model in this process (its first
    call loads it, which may take longer than any network answer should)."""
    if svc.embed is None or isinstance(svc.embed.provider, LocalEmbedder):
        return None
    return svc.embed_timeout


async def _lexical_route(ctx: RetrievalContext) -> Retrieved:
    """The chunks BM25 finds for the question: what is left when the embedder is down."""
    hits = await lexical_hits(ctx, ctx.param.chunk_top_k)
    return Retrieved(chunks=[ChunkHit(c, float(s), "lexical") for c, s in hits], graph_chunks=False)


_LEXICAL = ModeSpec("lexical", _lexical_route, frozenset(), keywords=False)


async def _retrieve(svc: Services, ctx: RetrievalContext, spec: ModeSpec) -> _Found:
    """The mode's routes and the conditions read side by side, then the screen."""
    if spec.retrieve is None:
        raise QueryError(f"mode {spec.name!r} retrieves nothing; it has no context to assemble")
    found, conds = await asyncio.gather(
        spec.retrieve(ctx), read_conditions(ctx.question, ctx.keywords, ctx.param, svc.chat)
    )
    return _Found(ctx, screen_found(conds, ctx.question, found, ctx), conds)


async def _budgeted(svc: Services, got: _Found, applied: FilterData | None) -> Assembly:
    """Entities, relations, paths and chunks fitted to the token budgets, then numbered."""
    ctx, found, conds, param, trace = got.ctx, got.found, got.conds, got.ctx.param, got.ctx.trace
    fixed = bare_prompt_tokens(svc.tokenizer, ctx.question, param)
    room = param.max_total_tokens - fixed - BUFFER_TOKENS - skeleton_tokens(svc.tokenizer)
    room = conds.reserve(svc.tokenizer, room)
    reserve = path_reserve(found.paths, param.max_relation_tokens, svc.tokenizer)
    ents, rels = _fit_graph(found.entities, found.relations, room, param, svc, trace, reserve)
    left = room - ents.tokens - rels.tokens
    budget = path_budget(param.max_relation_tokens, rels.tokens, left)
    paths = fit_paths(found.paths, rels.items, budget, svc.tokenizer, trace)
    c_budget = max(left - paths.tokens, 0)
    chunks, cut = await _chunk_section(ctx, svc, found, ents, rels, c_budget)
    numbered = number_context(ents.items, rels.items, chunks.items)
    final = Final(ents.items, rels.items, chunks.items, numbered.numbers)
    path_lines = numbered_lines(paths.items, rels.items, numbered.numbers.relations)
    context = conds.finish(with_paths(numbered.context, path_lines), final)
    sections = {"entities": ents, "relations": rels, "paths": paths, "chunks": chunks}
    tokens = {k: v.tokens for k, v in sections.items()}
    tokens |= {"prompt_without_context": fixed, "chunk_budget": c_budget}
    truncated = {k: v.dropped for k, v in sections.items()} | {"chunks_past_chunk_top_k": cut}
    counts = {k: len(v.items) for k, v in sections.items()}
    trace.set("final", {**counts, "tokens": tokens})
    return Assembly(
        "ok" if context else "no_context",
        ctx.keywords,
        ctx.vectors,
        ents.items,
        rels.items,
        chunks.items,
        [str(n) for n in numbered.numbers.chunks],
        numbered.references,
        context,
        tokens,
        truncated,
        applied,
        numbered.numbers,
        ctx.doc_filter,
        conditions=conds,
        paths=paths.items,
        path_lines=path_lines,
    )
