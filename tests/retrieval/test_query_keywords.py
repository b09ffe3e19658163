"""Keyword parsing, the heuristic extractor and keyword resolution."""

from __future__ import annotations

import pytest

from kgrag.errors import ModelServerError
from kgrag.llm.base import ChatResult
from kgrag.retrieval.keywords.heuristic import heuristic_keywords, search_text
from kgrag.retrieval.keywords.source import (
    clean_keywords,
    parse_keywords,
    question_keywords,
)
from tests.support.chat import ScriptedChat


@pytest.mark.parametrize(
    "text, high, low",
    [
        ('{"high_level_keywords": ["a b", "c"], "low_level_keywords": ["X"]}', ["a b", "c"], ["X"]),
        (
            '```json\n{"high_level_keywords": ["t"], "low_level_keywords": ["N", "n", " N "]}\n```',
            ["t"],
            ["N"],
        ),
        ("Sure! {'high_level_keywords': ['t',], 'low_level_keywords': 'A, B'", ["t"], ["A", "B"]),
        ('[{"high_level_keywords": [1, null, "x"]}]', ["1", "x"], []),
        ("no json here", [], []),
        ("", [], []),
    ],
)
def test_parse_keywords_is_tolerant(text, high, low):
    assert parse_keywords(text) == (high, low)


def test_clean_keywords_dedupes_case_insensitively():
    assert clean_keywords(["Scrooge", "scrooge", "  Marley ", "", 3]) == ["Scrooge", "Marley", "3"]
    assert clean_keywords(None) == []


@pytest.mark.parametrize(
    "question, high, low",
    [
        (
            "What are the main themes of the story, and who is Scrooge?",
            ["main themes", "story"],
            ["Scrooge"],
        ),
        ("What did the Bank of England do in 1844?", [], ["Bank of England", "1844"]),
        (
            "How does FW-A reach the logging platform over TLS?",
            ["reach", "logging platform"],
            ["FW-A", "TLS"],
        ),
        (
            "Who was Marley's partner in Homer's Odyssey?",
            ["partner"],
            ["Marley", "Homer's Odyssey"],
        ),
        (
            "Are Marian Gold and Jung Eun-ji in one band?",
            ["band"],
            ["Marian Gold and Jung Eun-ji", "Marian Gold", "Jung Eun-ji"],
        ),
    ],
)
def test_heuristic_keywords_english(question, high, low):
    assert heuristic_keywords(question) == (high, low)


def test_heuristic_keywords_chinese_uses_jieba():
    high, low = heuristic_keywords("诸葛亮和刘备在哪里相遇？FW-A 的日志平台")
    assert "诸葛亮" in low and "刘备" in low and "FW-A" in low
    assert all(len(w) >= 2 for w in high)


def test_search_text_drops_stop_words():
    assert search_text("Which license does FW-A need?") == "license FW-A need"
    assert search_text("the of and") == "the of and"


async def test_resolve_prefers_caller_then_llm():
    chat = ScriptedChat(
        ChatResult('{"high_level_keywords": ["h"], "low_level_keywords": ["L"]}', cached=True),
        then=None,
    )
    kws = await question_keywords("Who is Scrooge?", ["x"], [], chat)
    assert (kws.high, kws.low, kws.source) == (["x"], [], "caller") and chat.calls == []
    kws = await question_keywords("Who is Scrooge?", [], [], chat)
    assert (kws.high, kws.low, kws.source) == (["h"], ["L"], "cache")
    assert [(c.role, c.json_mode) for c in chat.calls] == [("keywords", True)]
    prompt = "\n".join(m["content"] for m in chat.messages[0])
    assert "Who is Scrooge?" in prompt and "high_level_keywords" in prompt and "English" in prompt


async def test_resolve_falls_back_to_the_heuristic_when_the_call_fails():
    kws = await question_keywords(
        "Who is Scrooge?", [], [], ScriptedChat(ModelServerError("502"), then=None)
    )
    assert kws.source == "heuristic" and kws.low == ["Scrooge"] and "502" in kws.error


async def test_resolve_without_chat_uses_the_heuristic():
    kws = await question_keywords("Who is Scrooge?", [], [], None)
    assert kws.to_dict() == {"high_level": [], "low_level": ["Scrooge"], "source": "heuristic"}
