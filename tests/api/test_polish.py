"""API polish: printable results, query vs stream, SyncKGRag's real methods, clear errors."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from kgrag import (
    AnswerStream,
    ConfigError,
    KGRag,
    NotOpenError,
    QueryResult,
    SyncKGRag,
)
from tests.support.chat import ScriptedChat

from .helpers import QUESTION, TEXT, settings

SYNC_METHODS = [
    "open",
    "insert",
    "index_paths",
    "index_documents",
    "retry_failed",
    "delete",
    "set_disabled",
    "documents",
    "export",
    "check",
    "rebuild",
    "query_param",
    "query",
    "query_data",
    "stream",
    "status",
]


async def test_print_shows_the_answer(tmp_path, capsys):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await rag.insert([TEXT])
        result = await rag.query(QUESTION, mode="local")
        context = await rag.query(QUESTION, mode="local", only_need_context=True)
    assert isinstance(result, QueryResult)
    print(result)
    assert capsys.readouterr().out == result.answer + "\n"
    assert result.answer.startswith("Based on the context")
    assert str(context) == context.context and "Ada Lovelace" in str(context)


async def test_stream_yields_pieces_then_the_result(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await rag.insert([TEXT])
        whole = await rag.query(QUESTION, mode="local")
        stream = rag.stream(QUESTION, mode="local")
        assert isinstance(stream, AnswerStream) and stream.result is None  # nothing ran yet
        pieces = [piece async for piece in stream]
    assert len(pieces) > 1 and "".join(pieces) == whole.answer
    assert stream.result is not None and stream.result.answer == whole.answer
    assert stream.fallback_reason is None and not stream.extractive


async def test_query_refuses_stream_true_and_points_at_stream(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        with pytest.raises(ConfigError, match=r"rag\.stream"):
            await rag.query(QUESTION, stream=True)
        with pytest.raises(ConfigError, match="stream"):
            await rag.query(QUESTION, rag.query_param(stream=True))


def test_sync_methods_have_the_async_signatures():
    assert not hasattr(SyncKGRag, "__getattr__")
    for name in SYNC_METHODS:
        sync, real = getattr(SyncKGRag, name), getattr(KGRag, name)
        assert inspect.signature(sync).parameters == inspect.signature(real).parameters, name
        assert not inspect.iscoroutinefunction(sync), name
        if name not in ("stream", "query_param"):
            assert inspect.iscoroutinefunction(real), name
    assert inspect.signature(SyncKGRag).parameters == inspect.signature(KGRag).parameters
    assert SyncKGRag.__doc__ and "blocking" in SyncKGRag.__doc__


def test_sync_stream_is_a_plain_iterator(tmp_path):
    with SyncKGRag(settings(tmp_path / "idx")) as rag:
        rag.insert([TEXT])
        whole = rag.query(QUESTION, mode="local")
        stream = rag.stream(QUESTION, mode="local")
        pieces = list(stream)
        early = rag.stream(QUESTION, mode="local")
        first = next(early)
        early.close()  # stopping early gives the slot back: the next call does not hang
        again = rag.query(QUESTION, mode="local")
    assert "".join(pieces) == whole.answer and stream.result is not None
    assert first and whole.answer.startswith(first) and again.answer == whole.answer


async def test_methods_before_open_raise_not_open(tmp_path):
    rag = KGRag(settings(tmp_path / "idx"))
    for call in (
        lambda: rag.query(QUESTION),
        lambda: rag.insert([TEXT]),
        lambda: rag.status(),
        lambda: rag.documents(),
    ):
        with pytest.raises(NotOpenError, match=r"async with KGRag\(\.\.\.\) as rag"):
            await call()
    with pytest.raises(NotOpenError):
        rag.stream(QUESTION)
    assert not (tmp_path / "idx").exists()


async def test_insert_refuses_mismatched_lengths(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        with pytest.raises(ConfigError, match=r"2 text\(s\), 1 file path\(s\)"):
            await rag.insert([TEXT, "Another text about Paris."], ["a.txt"])
        with pytest.raises(ConfigError, match=r"1 id\(s\)"):
            await rag.insert([TEXT, "Another text about Paris."], ids=["one"])
        report = await rag.insert(TEXT, "notes.txt", ids="ada")
        status = await rag.status()
    assert len(report.processed) == 1 and status["documents"]["processed"]["count"] == 1


def slow_chat() -> ScriptedChat:
    """A chat provider whose calls take a while, so concurrency shows."""
    return ScriptedChat(identity="slow-test", delay=0.02)


async def _burst(rag: KGRag, calls: int) -> None:
    messages = [[{"role": "user", "content": f"question {i}"}] for i in range(calls)]
    await asyncio.gather(*(rag.models.chat.chat(m, use_cache=False) for m in messages))


async def test_two_instances_keep_their_own_limits(tmp_path):
    a = KGRag(settings(tmp_path / "a", llm_max_async=2), chat=slow_chat())
    b = KGRag(settings(tmp_path / "b", llm_max_async=5), chat=slow_chat())
    async with a, b:
        await asyncio.gather(_burst(a, 12), _burst(b, 12))
        assert a.models.chat.limiter is not b.models.chat.limiter
        assert (a.models.chat.limiter.limit, b.models.chat.limiter.limit) == (2, 5)
        assert a.models.chat.limiter.max_in_use == 2 and b.models.chat.limiter.max_in_use == 5


async def test_limits_are_shared_when_passed_to_both(tmp_path):
    from kgrag import Limits

    limits = Limits(chat=3, embed=2)
    a = KGRag(settings(tmp_path / "a", llm_max_async=8), chat=slow_chat(), limits=limits)
    b = KGRag(settings(tmp_path / "b", llm_max_async=8), chat=slow_chat(), limits=limits)
    async with a, b:
        await asyncio.gather(_burst(a, 10), _burst(b, 10))
        assert a.models.chat.limiter is b.models.chat.limiter is limits.chat
        assert limits.chat.max_in_use == 3  # together, never more than the shared budget
        assert a.models.embed.limiter is limits.embed
