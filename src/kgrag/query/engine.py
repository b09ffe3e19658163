"""The query engine: questions in, answers, contexts, prompts or data out.

::

    engine = QueryEngine(storage, chat, embed, rerank, tokenizer, settings)
    result = await engine.query("Who is Scrooge?", QueryParam(mode="mix"))
    data = await engine.query_data("Who is Scrooge?", QueryParam(), trace=True)

``chat`` may be None (no chat model configured): keywords then come from
a heuristic and answers are extractive. ``rerank`` may be None.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from kgrag.errors import QueryError
from kgrag.query import prompts as P
from kgrag.query.answer import (
    answer_messages,
    bypass_messages,
    extractive_answer,
    render_prompt,
    single,
)
from kgrag.query.assemble import Assembly, Services, assemble, bare_prompt_tokens
from kgrag.query.context import (
    chunk_line,
    entity_line,
    reference_ids,
    relation_line,
    render_context,
)
from kgrag.query.data import assembly_data
from kgrag.query.keywords import KeywordSet
from kgrag.query.modes import ModeSpec, get_mode
from kgrag.query.param import QueryParam, QueryResult
from kgrag.query.trace import NO_TRACE, Trace
from kgrag.tokenizer import get_tokenizer

# A mode name resolved per index: see QueryEngine._auto_mode.
AUTO_MODE = "auto"


class QueryEngine:
    """Answers questions over one index."""

    def __init__(
        self,
        storage: Any,
        chat: Any = None,
        embed: Any = None,
        rerank: Any = None,
        tokenizer: Any = None,
        settings: Any = None,
    ):
        tok = tokenizer or get_tokenizer(getattr(settings, "tokenizer", "o200k_base"))
        self.services = Services(
            storage, chat, embed, rerank, tok, getattr(settings, "language", "English")
        )
        self.settings = settings

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
        """``ppr`` on an index built by the NLP extractor alone (it retrieves best there), else ``mix``."""
        built = await self.services.storage.get_meta("extractors") or []
        return "ppr" if list(built) == ["nlp"] else "mix"

    async def query(
        self, question: str, param: QueryParam | None = None
    ) -> QueryResult | AsyncIterator[str]:
        """Answer ``question``; an async iterator of text pieces when ``param.stream``."""
        param, spec = await self._prepare(question, param)
        if spec.retrieve is None:
            return await self._bypass(question, param)
        asm = await assemble(self.services, question, param, spec, NO_TRACE)
        if param.only_need_context:
            return QueryResult("context", context=asm.context, **_base(param, asm))
        messages, prompt, count = self._fit_prompt(question, param, asm)
        base = _base(param, asm)
        base["tokens"]["prompt"] = count
        if param.only_need_prompt:
            return QueryResult("prompt", context=asm.context, prompt=prompt, **base)
        if asm.status != "ok" or self.services.chat is None:
            text = await self._fixed_answer(asm)
            return (
                single(text)
                if param.stream
                else QueryResult(
                    "answer",
                    answer=text,
                    context=asm.context,
                    extractive=asm.status == "ok",
                    **base,
                )
            )
        return await self._generate(messages, param, asm.context, base)

    async def _fixed_answer(self, asm: Assembly) -> str:
        """The reply when nothing was found or no chat model is configured."""
        if asm.status == "no_keywords":
            return P.NO_KEYWORDS_ANSWER
        if asm.status == "no_context":
            words = asm.keywords.low + asm.keywords.high
            searched = f" (searched for: {', '.join(words)})" if words else ""
            return P.NO_CONTEXT_ANSWER.format(searched=searched)
        return await extractive_answer(
            asm.vectors["query"],
            asm.chunks,
            asm.chunk_refs,
            asm.references,
            self.services.embed,
            (asm.entities, asm.relations),
        )

    async def _generate(
        self, messages: list[dict[str, str]], param: QueryParam, context: str, base: dict[str, Any]
    ) -> QueryResult | AsyncIterator[str]:
        chat = self.services.chat
        if param.stream:
            return chat.stream(messages, role="answer")
        # A conversation makes the answer depend on more than the prompt's facts: no cache.
        options = {"use_cache": False} if param.conversation_history else {}
        result = await chat.chat(messages, role="answer", **options)
        return QueryResult(
            "answer", answer=result.text, context=context, cached=result.cached, **base
        )

    def _fit_prompt(
        self, question: str, param: QueryParam, asm: Assembly
    ) -> tuple[list[dict[str, str]], str, int]:
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

    async def _bypass(self, question: str, param: QueryParam) -> QueryResult | AsyncIterator[str]:
        messages = bypass_messages(question, param)
        prompt = render_prompt(messages)
        base = dict(mode=param.mode, tokens={"prompt": self.services.tokenizer.count(prompt)})
        if param.only_need_context:
            return QueryResult("context", **base)
        if param.only_need_prompt:
            return QueryResult("prompt", prompt=prompt, **base)
        if self.services.chat is None:
            return (
                single(P.NO_LLM_BYPASS)
                if param.stream
                else QueryResult("answer", answer=P.NO_LLM_BYPASS, **base)
            )
        return await self._generate(messages, param, "", base)

    async def query_data(
        self, question: str, param: QueryParam | None = None, trace: bool = False
    ) -> dict[str, Any]:
        """Keywords, entities, relations, chunks, references and token counts; no answer call.

        With ``trace`` the result has a ``"trace"`` entry: per stage, what
        each route found and every item dropped, and why
        (see :func:`kgrag.query.trace.render_trace`).
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
            asm = await assemble(self.services, question, param, spec, recorder)
        data = assembly_data(question, param, asm, rerank=self.services.rerank is not None)
        if trace:
            await self._label_chunks(recorder)
            data["trace"] = recorder.to_dict()
        return data

    async def _label_chunks(self, recorder: Trace) -> None:
        """Name the file of every chunk in the trace (one metadata read)."""
        ids = sorted(recorder.chunk_ids())
        if ids:
            metas = await self.services.storage.vectors("chunks").get_metas(ids)
            recorder.label_chunks(
                {i: str(m.get("file_path")) for i, m in metas.items() if m.get("file_path")}
            )


def _base(param: QueryParam, asm: Assembly) -> dict[str, Any]:
    """The QueryResult fields every outcome shares."""
    return dict(
        mode=param.mode,
        references=list(asm.references) if param.include_references else [],
        keywords=asm.keywords.to_dict(),
        tokens=dict(asm.tokens),
        no_context=asm.status != "ok",
    )


def _drop_last_chunk(asm: Assembly) -> None:
    """Remove the lowest-ranked chunk and rebuild references and context."""
    asm.chunks.pop()
    asm.truncated["chunks"] = asm.truncated.get("chunks", 0) + 1
    asm.chunk_refs, asm.references = reference_ids(asm.chunks)
    lines = [chunk_line(c, r) for c, r in zip(asm.chunks, asm.chunk_refs, strict=False)]
    asm.context = render_context(
        [entity_line(e) for e in asm.entities],
        [relation_line(r) for r in asm.relations],
        lines,
        asm.references,
    )
