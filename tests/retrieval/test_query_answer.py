"""Answers, prompts, contexts, streaming, caching, bypass and the no-LLM path."""

from __future__ import annotations

import re

import pytest

from kgrag.errors import QueryError
from kgrag.retrieval import QueryParam, QueryResult
from tests.retrieval.corpus import CHUNKS

Q = "Which license does FW-A need for TLS output?"
KW = dict(ll_keywords=["FW-A"], hl_keywords=["license dependency"])


async def collect(stream) -> str:
    return "".join([piece async for piece in stream])


async def test_answer_uses_one_answer_call_with_question_and_context(parts):
    result = await parts.engine().query(Q, QueryParam(**KW, include_references=True))
    assert isinstance(result, QueryResult) and result.kind == "answer"
    assert result.answer and not result.cached
    (request,) = parts.chat_provider.requests
    assert request.role == "answer"
    system, user = request.messages
    assert system["role"] == "system" and "knowledge graph" in system["content"]
    assert "Multiple Paragraphs" in system["content"]
    assert Q in user["content"] and result.context in user["content"]
    assert "License L" in result.context and "manuals/fw-a-v2.md" in result.context
    assert result.references and result.references[0]["reference_id"] == "1"


async def test_naive_mode_uses_the_document_wording(parts):
    await parts.engine().query(Q, QueryParam(mode="naive"))
    (request,) = parts.chat_provider.requests
    assert "knowledge graph" not in request.messages[0]["content"]
    assert "Knowledge graph entities" not in request.messages[1]["content"]


async def test_references_only_when_asked(parts):
    result = await parts.engine().query(Q, QueryParam(**KW))
    assert result.references == [] and re.search(r"^\[\d+\] manuals/", result.context, re.M)


async def test_same_query_is_answered_from_the_cache(parts):
    engine = parts.engine()
    await engine.query(Q, QueryParam(**KW))
    again = await engine.query(Q, QueryParam(**KW))
    assert again.cached and parts.chat_provider.roles() == ["answer"]


@pytest.mark.parametrize(
    "change",
    [
        dict(mode="global"),  # local: the same context as mix once FW-B items conflict
        dict(response_type="Bullet Points"),
        dict(user_prompt="Answer in French."),
        dict(top_k=1),
        dict(chunk_top_k=1),
        dict(max_relation_tokens=100),
    ],
)
async def test_anything_that_changes_the_answer_changes_the_prompt(parts, change):
    engine = parts.engine()
    await engine.query(Q, QueryParam(**KW))
    other = await engine.query(Q, QueryParam(**KW, **change))
    assert not other.cached
    first, second = parts.chat_provider.requests
    assert first.messages != second.messages


async def test_conversation_history_bypasses_the_answer_cache(parts):
    engine = parts.engine()
    history = [
        {"role": "user", "content": "We run firmware v2."},
        {"role": "assistant", "content": "Noted."},
    ]
    for _ in range(2):
        result = await engine.query(Q, QueryParam(**KW, conversation_history=history))
        assert not result.cached
    assert parts.chat_provider.roles() == ["answer", "answer"]
    assert parts.chat_provider.requests[0].messages[1:3] == history


async def test_streaming_yields_the_answer_in_pieces(parts):
    stream = parts.engine().stream(Q, QueryParam(**KW))
    assert not isinstance(stream, QueryResult)
    text = await collect(stream)
    assert text.startswith("Based on the context")


async def test_context_only_and_prompt_only_make_no_answer_call(parts):
    engine = parts.engine()
    ctx = await engine.query(Q, QueryParam(**KW, only_need_context=True))
    prompt = await engine.query(Q, QueryParam(**KW, only_need_prompt=True))
    assert ctx.kind == "context" and ctx.text == ctx.context
    assert "Knowledge graph entities" in ctx.context and "Reference Document List" in ctx.context
    assert prompt.kind == "prompt" and ctx.context in prompt.prompt and Q in prompt.prompt
    assert parts.chat_provider.requests == []


async def test_bypass_sends_history_and_question_only(parts):
    history = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    result = await parts.engine().query(
        "Tell me a joke", QueryParam(mode="bypass", conversation_history=history)
    )
    (request,) = parts.chat_provider.requests
    assert request.messages == [*history, {"role": "user", "content": "Tell me a joke"}]
    assert result.answer and result.references == []


async def test_no_llm_gives_an_extractive_answer_with_references(parts):
    result = await parts.engine(chat=False).query(Q, QueryParam(include_references=True))
    assert result.extractive and result.keywords["source"] == "heuristic"
    assert "No chat model is configured" in result.answer
    assert "KGRAG_LLM_BASE_URL" in result.answer and "OPENAI_API_KEY" in result.answer
    best = result.answer.split("Best supporting passages:")[1].splitlines()[1]
    assert "License L" in best
    number = re.fullmatch(r'.*" \[(\d+)\]', best).group(1)
    cited = next(r for r in result.references if r["reference_id"] == number)
    assert cited["kind"] == "chunk" and cited["file_path"] == CHUNKS["C3"][0] and cited["cited"]


async def test_no_llm_streaming_and_bypass(parts):
    engine = parts.engine(chat=False)
    text = await collect(engine.stream(Q, QueryParam()))
    assert "Best supporting passages" in text
    bypass = await engine.query(Q, QueryParam(mode="bypass"))
    assert "none is configured" in bypass.answer


async def test_nothing_found_is_said_plainly_without_an_answer_call(parts):
    result = await parts.engine().query(
        "zebra", QueryParam(ll_keywords=["zebra"], hl_keywords=["zoology"], mode="hybrid")
    )
    assert result.no_context and "could not find anything" in result.answer
    assert "zebra" in result.answer
    assert parts.chat_provider.requests == []


async def test_short_question_without_keywords_is_its_own_keyword(parts):
    data = await parts.engine(chat=False).query_data("the FW-A?", QueryParam(mode="local"))
    assert data["keywords"]["low_level"] == ["FW-A"]
    data = await parts.engine(chat=False).query_data("what is it?", QueryParam(mode="local"))
    assert data["keywords"] == {
        "high_level": [],
        "low_level": ["what is it?"],
        "source": "question",
    }


async def test_long_question_without_keywords_gets_an_honest_reply(parts):
    question = "and what is it that they would have been doing, if any of them were there?"
    result = await parts.engine(chat=False).query(question, QueryParam(mode="local"))
    assert result.no_context and "could not pick out any search terms" in result.answer


async def test_empty_question_and_bad_params_are_query_errors(parts):
    engine = parts.engine()
    with pytest.raises(QueryError):
        await engine.query("  ", QueryParam())
    with pytest.raises(QueryError):
        await engine.query(Q, QueryParam(top_k=-1))


async def test_budget_too_small_for_the_bare_prompt_is_an_error(parts):
    with pytest.raises(QueryError, match="too small"):
        await parts.engine().query(Q, QueryParam(**KW, max_total_tokens=50))
