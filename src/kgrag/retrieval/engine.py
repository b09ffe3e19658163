"""The query engine: questions in, answers, contexts, prompts or data out.

::

    engine = QueryEngine(storage, chat, embed, rerank, tokenizer, settings)
    result = await engine.query("Who is Scrooge?", QueryParam(mode="mix"))
    async for piece in engine.stream("Who is Scrooge?", QueryParam()): ...
    data = await engine.query_data("Who is Scrooge?", QueryParam(), trace=True)

``chat`` may be None (no chat model configured): keywords then come from
a heuristic and answers are extractive. ``rerank`` may be None.

Someone waits for a query, so reaching its chat model is bounded: until
the model has answered once in the query, a call (retries included) must
bring its first piece within ``settings.query.llm_timeout`` seconds (a
plain call is asked for as a stream to see it), and once one fails the
query makes no more. A model that has answered may take the ordinary
``llm_timeout`` to write a long answer (see ``ChatService.bounded``). A
failed keywords call falls back to heuristic keywords, a failed answer
call to the extractive answer, whose ``fallback_reason`` says why in
words a client may see (no endpoint address: the log has the details);
bypass mode, which has no other answer, raises the :class:`ModelError`.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from kgrag.errors import ModelError, QueryError
from kgrag.llm.failures import public_reason
from kgrag.llm.ledger import Prices, Tally, query_scope, scoped_steps, within
from kgrag.llm.tokenizer import get_tokenizer
from kgrag.retrieval.answer import replies as P
from kgrag.retrieval.answer.citations import (
    CitationFilter,
    apply_citations,
    filtered,
    record_citations,
)
from kgrag.retrieval.answer.extractive import extractive_answer, fallback_note
from kgrag.retrieval.answer.messages import answer_messages, bypass_messages, render_prompt
from kgrag.retrieval.answer.stream import AnswerStream
from kgrag.retrieval.assemble import Assembly, Services, assemble, bare_prompt_tokens
from kgrag.retrieval.conditions.render import Final
from kgrag.retrieval.context.numbered import number_context
from kgrag.retrieval.context.paths import with_paths
from kgrag.retrieval.context.references import complete_references
from kgrag.retrieval.data import assembly_data
from kgrag.retrieval.keywords.source import KeywordSet
from kgrag.retrieval.modes.registry import ModeSpec, get_mode
from kgrag.retrieval.param import QueryParam, QueryResult
from kgrag.retrieval.shapes import CoverageData, KeywordsData, QueryData, ReferenceData
from kgrag.retrieval.trace import NO_TRACE, Trace
from kgrag.storage.layout import CHUNK_VECTORS, EXTRACTORS_META
from kgrag.storage.layout.typed import read_meta

if TYPE_CHECKING:
    from kgrag.config.settings import Settings
    from kgrag.llm.base import Messages
    from kgrag.llm.embedding import EmbeddingService
    from kgrag.llm.service import ChatService, RerankService
    from kgrag.llm.tokenizer import Tokenizer
    from kgrag.storage.base import Storage

log = logging.getLogger(__name__)

# A mode resolved per index, then per question: see QueryEngine._auto_mode.
AUTO_MODE = "auto"
# Seconds a query waits to reach the chat model when the settings do not say.
DEFAULT_QUERY_LLM_TIMEOUT = 10.0
# Seconds a query waits to embed the question before it searches BM25 alone.
DEFAULT_QUERY_EMBED_TIMEOUT = 5.0


@dataclass(slots=True)
class _Plan:
    """What a query will return: ``result`` as it is, or with an answer written from ``messages``."""

    result: QueryResult
    messages: Messages | None = None
    chat: ChatService | None = None
    asm: Assembly | None = None  # None in bypass mode
    question: str = ""  # what the extractive answer ranks sentences against


class QueryEngine:
    """Answers questions over one index."""

    def __init__(
        self,
        storage: Storage,
        chat: ChatService | None = None,
        embed: EmbeddingService | None = None,
        rerank: RerankService | None = None,
        tokenizer: Tokenizer | None = None,
        settings: Settings | None = None,
    ):
        tok = tokenizer or get_tokenizer(settings.chunking.tokenizer if settings else "o200k_base")
        self.services = Services(
            storage,
            chat,
            embed,
            rerank,
            tok,
            settings.extraction.language if settings else "English",
            settings.query.embed_timeout if settings else DEFAULT_QUERY_EMBED_TIMEOUT,
        )
        self.settings = settings
        self.llm_timeout = settings.query.llm_timeout if settings else DEFAULT_QUERY_LLM_TIMEOUT

    @property
    def prices(self) -> Prices:
        """The price table (``Settings.prices``) a query's cost is priced with."""
        return self.settings.cost.prices if self.settings else {}

    def param(self, **overrides: Any) -> QueryParam:
        """A :class:`QueryParam` with the settings' defaults and ``overrides``."""
        return QueryParam.from_settings(self.settings, **overrides)

    async def _prepare(
        self, question: str, param: QueryParam | None
    ) -> tuple[QueryParam, ModeSpec]:
        if not isinstance(question, str) or not question.strip():
            raise QueryError("the question is empty")
        param = param or self.param()
        param.validate()
        if param.mode == AUTO_MODE:
            param = param.replace(mode=await self._auto_mode())
        return param, get_mode(param.mode)

    async def _auto_mode(self) -> str:
        """On an index built by the NLP extractor alone, the per-question router
        (:mod:`kgrag.retrieval.modes.auto`); else ``mix``."""
        built = await read_meta(self.services.storage, EXTRACTORS_META, list[str]) or []
        return AUTO_MODE if built == ["nlp"] else "mix"

    def _query_services(self) -> Services:
        """The services of one query: the chat model behind this query's bound."""
        chat = self.services.chat
        if chat is None:
            return self.services
        return dataclasses.replace(self.services, chat=chat.bounded(self.llm_timeout))

    async def query(self, question: str, param: QueryParam | None = None) -> QueryResult:
        """Answer ``question`` (:meth:`stream` gives the answer in pieces)."""
        if param is not None and param.stream:
            raise QueryError(
                "query() returns a QueryResult; for the answer in pieces use stream() "
                "(QueryParam.stream is not used)"
            )
        param, spec = await self._prepare(question, param)
        tally = Tally()
        with within(query_scope(param.mode, tally)):
            plan = await self._plan(question, param, spec)
            result = plan.result if plan.messages is None else await self._generate(plan, param)
        result = _checked(result, plan.asm)
        result.cost = tally.cost(self.prices)
        return result

    def stream(self, question: str, param: QueryParam | None = None) -> AnswerStream:
        """The answer in pieces; a fixed or extractive answer comes as one piece.

        Nothing runs before the first piece is asked for; ``param.stream``
        is ignored. Close the stream (``aclose``) to stop early.
        """
        return AnswerStream(lambda out: self._costed(question, param, out))

    async def _costed(
        self, question: str, param: QueryParam | None, out: AnswerStream
    ) -> AsyncGenerator[str, None]:
        """:meth:`_pieces`, its calls counted for the query (``out.result.cost``)."""
        param, spec = await self._prepare(question, param)
        tally = Tally()
        steps = scoped_steps(
            self._pieces(question, param, spec, out), query_scope(param.mode, tally)
        )
        async with aclosing(steps):
            try:
                async for piece in steps:
                    yield piece
            finally:
                if out.result is not None:
                    out.result.cost = tally.cost(self.prices)

    async def _pieces(
        self, question: str, param: QueryParam, spec: ModeSpec, out: AnswerStream
    ) -> AsyncGenerator[str, None]:
        plan = await self._plan(question, param.replace(stream=False), spec)
        out.result = plan.result
        if plan.messages is None or plan.chat is None:
            out.result = _checked(plan.result, plan.asm)
            yield plan.result.text
            return
        pieces = plan.chat.stream(plan.messages, role="answer")
        try:
            try:
                first = await anext(pieces)
            except StopAsyncIteration:
                return
            except ModelError as exc:
                out.result = _checked(await self._fallback(plan, exc), plan.asm)
                yield out.result.answer
                return
            check = CitationFilter(frozenset(plan.asm.numbers.all())) if plan.asm else None
            async for text in filtered(first, pieces, check):
                yield text
            if check is not None:
                record_citations(out.result, check.cited, check.invalid)
        finally:
            await pieces.aclose()

    async def _plan(self, question: str, param: QueryParam, spec: ModeSpec) -> _Plan:
        """Retrieve, and settle everything about the result but the model's answer."""
        svc = self._query_services()
        if spec.retrieve is None:
            return self._bypass(question, param, svc)
        asm = await assemble(svc, question, param, spec, NO_TRACE)
        base = _base(param, asm)
        if param.only_need_context:
            return _Plan(QueryResult("context", context=asm.context, **base))
        messages, prompt, count = self._fit_prompt(question, param, asm)
        base["tokens"]["prompt"] = count
        base["coverage"] = asm.conditions.coverage_data()  # dropped chunks may change it
        base["references"] = await self._references(param, asm)
        if param.only_need_prompt:
            return _Plan(QueryResult("prompt", context=asm.context, prompt=prompt, **base))
        if asm.status != "ok" or svc.chat is None:
            text = await self._fixed_answer(asm, question=question)
            extractive = asm.status == "ok"
            result = QueryResult(
                "answer", answer=text, context=asm.context, extractive=extractive, **base
            )
            return _Plan(result, asm=asm)
        return _Plan(
            QueryResult("answer", context=asm.context, **base), messages, svc.chat, asm, question
        )

    async def _references(self, param: QueryParam, asm: Assembly) -> list[ReferenceData]:
        """The result's references: none unless asked for, else every number's, spans filled."""
        if not param.include_references:
            return []
        storage = self.services.storage
        return await complete_references(storage, asm.references, asm.doc_filter.allows_chunk)

    async def _fixed_answer(
        self, asm: Assembly, note: str = P.NO_LLM_NOTE, question: str = ""
    ) -> str:
        """The reply when nothing was found or no chat model answers."""
        if asm.status == "no_keywords":
            return P.NO_KEYWORDS_ANSWER
        if asm.status == "no_context":
            words = asm.keywords.low + asm.keywords.high
            searched = f" (searched for: {', '.join(words)})" if words else ""
            return P.NO_CONTEXT_ANSWER.format(searched=searched)
        lexical = "query" not in asm.vectors  # the embedder failed: rank sentences by BM25 alone
        answer = await extractive_answer(
            asm.vectors.get("query", np.zeros(0, dtype=np.float32)),
            asm.chunks,
            asm.chunk_refs,
            asm.references,
            None if lexical else self.services.embed,
            (asm.entities, asm.relations),
            note=note,
            question=question,
        )
        return asm.conditions.answer_with_note(answer)  # what the sources do not cover, first

    async def _generate(self, plan: _Plan, param: QueryParam) -> QueryResult:
        """The model's answer to ``plan``; the extractive one when the model fails."""
        assert plan.chat is not None and plan.messages is not None
        # A conversation makes the answer depend on more than the prompt's facts: no cache.
        use_cache = not param.conversation_history
        try:
            reply = await plan.chat.chat(plan.messages, role="answer", use_cache=use_cache)
        except ModelError as exc:
            return await self._fallback(plan, exc)
        return dataclasses.replace(plan.result, answer=reply.text, cached=reply.cached)

    async def _fallback(self, plan: _Plan, exc: ModelError) -> QueryResult:
        """The answer without the model, saying why it failed (bypass mode: raise)."""
        reason = public_reason(exc, "the chat model", self.llm_timeout)
        log.warning("the chat model failed (%s): %s", reason, _detail(plan, exc))
        if plan.asm is None:
            failed = ModelError(f"{reason}; bypass mode has no other answer")
            failed.public = str(failed)
            raise failed from exc
        text = await self._fixed_answer(
            plan.asm, note=fallback_note(reason), question=plan.question
        )
        return dataclasses.replace(
            plan.result, answer=text, extractive=True, fallback_reason=reason
        )

    def _fit_prompt(
        self, question: str, param: QueryParam, asm: Assembly
    ) -> tuple[Messages, str, int]:
        """(messages, prompt text, its tokens), dropping trailing chunks while it runs over."""
        tok = self.services.tokenizer
        while True:
            messages = answer_messages(question, asm.context, param, asm.graph)
            prompt = render_prompt(messages)
            count = tok.count(prompt)
            if count <= param.max_total_tokens:
                return messages, prompt, count
            if not asm.chunks:
                raise QueryError(
                    f"max_total_tokens {param.max_total_tokens} is too small for the prompt "
                    f"without context ({bare_prompt_tokens(tok, question, param)} tokens)"
                )
            _drop_last_chunk(asm)

    def _bypass(self, question: str, param: QueryParam, svc: Services) -> _Plan:
        messages = bypass_messages(question, param)
        prompt = render_prompt(messages)
        tokens = {"prompt": self.services.tokenizer.count(prompt)}
        if param.only_need_context:
            return _Plan(QueryResult("context", mode=param.mode, tokens=tokens))
        if param.only_need_prompt:
            return _Plan(QueryResult("prompt", mode=param.mode, prompt=prompt, tokens=tokens))
        result = QueryResult("answer", mode=param.mode, tokens=tokens)
        if svc.chat is None:
            return _Plan(dataclasses.replace(result, answer=P.NO_LLM_BYPASS))
        return _Plan(result, messages, svc.chat)

    async def query_data(
        self, question: str, param: QueryParam | None = None, trace: bool = False
    ) -> QueryData:
        """Keywords, entities, relations, chunks, references and token counts; no answer call.

        With ``trace`` the result has a ``"trace"`` entry: per stage, what
        each route found and every item dropped, and why
        (see :func:`kgrag.retrieval.trace.render_trace`).
        """
        param, spec = await self._prepare(question, param)
        recorder = Trace() if trace else NO_TRACE
        recorder.set("question", question)
        recorder.set("mode", param.mode)
        recorder.set(
            "params",
            {
                k: getattr(param, k)
                for k in (
                    "top_k",
                    "chunk_top_k",
                    "cosine_threshold",
                    "related_chunk_number",
                    "max_entity_tokens",
                    "max_relation_tokens",
                    "max_total_tokens",
                    "enable_rerank",
                )
            },
        )
        if spec.retrieve is None:
            asm = Assembly("no_context", keywords=KeywordSet(source="unused"))
        else:
            with within(query_scope(param.mode, Tally())):
                asm = await assemble(self.services, question, param, spec, recorder)
        asm.references = await self._references(param.replace(include_references=True), asm)
        data = assembly_data(question, param, asm, rerank=self.services.rerank is not None)
        if trace:
            await self._label_chunks(recorder)
            data["trace"] = recorder.to_dict()
        return data

    async def _label_chunks(self, recorder: Trace) -> None:
        """Name the file of every chunk in the trace (one metadata read)."""
        ids = sorted(recorder.chunk_ids())
        if ids:
            metas = await self.services.storage.vectors(CHUNK_VECTORS).get_metas(ids)
            recorder.label_chunks(
                {i: str(m.get("file_path")) for i, m in metas.items() if m.get("file_path")}
            )


def _detail(plan: _Plan, exc: ModelError) -> str:
    """The failure as the operator's log should have it (endpoint included)."""
    return (plan.chat.failure if plan.chat else None) or str(exc)


class _Base(TypedDict):
    """The QueryResult fields every outcome shares."""

    mode: str
    references: list[ReferenceData]
    keywords: KeywordsData
    tokens: dict[str, int]
    no_context: bool
    coverage: list[CoverageData]
    retrieval_note: str | None


def _base(param: QueryParam, asm: Assembly) -> _Base:
    """The QueryResult fields every outcome shares."""
    return {
        "mode": param.mode,
        "references": list(asm.references) if param.include_references else [],
        "keywords": asm.keywords.to_dict(),
        "tokens": dict(asm.tokens),
        "no_context": asm.status != "ok",
        "coverage": asm.conditions.coverage_data(),
        "retrieval_note": asm.note,
    }


def _drop_last_chunk(asm: Assembly) -> None:
    """Remove the lowest-ranked chunk and renumber references and context (chunks come last)."""
    asm.chunks.pop()
    asm.truncated["chunks"] = asm.truncated.get("chunks", 0) + 1
    numbered = number_context(asm.entities, asm.relations, asm.chunks)
    asm.numbers, asm.references, asm.context = (
        numbered.numbers,
        numbered.references,
        numbered.context,
    )
    asm.chunk_refs = [str(n) for n in numbered.numbers.chunks]
    final = Final(asm.entities, asm.relations, asm.chunks, asm.numbers)
    asm.context = asm.conditions.finish(with_paths(asm.context, asm.path_lines), final)


def _checked(result: QueryResult, asm: Assembly | None) -> QueryResult:
    """``result`` with its answer's citations checked against the context's numbers.

    A chat model's invalid numbers are removed; an extractive answer is
    only scanned (its quotes stay verbatim). Bypass mode has no context.
    """
    if asm is None or result.kind != "answer" or asm.status != "ok":
        return result
    return apply_citations(result, asm.numbers.all(), strip=not result.extractive)
