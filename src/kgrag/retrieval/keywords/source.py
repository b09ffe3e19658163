"""High- and low-level keywords of a question.

In order of preference the keywords come from the caller (``hl_keywords``
/ ``ll_keywords``), the chat model (role ``keywords``; the chat service
caches the call by its messages, which hold only the question and the
index language, so every mode shares one cache entry), or, when no chat model is configured, the
heuristic extractor of :mod:`kgrag.retrieval.keywords.heuristic`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import json_repair

from kgrag.errors import ModelError
from kgrag.retrieval.keywords.heuristic import heuristic_keywords
from kgrag.retrieval.prompts import keywords_messages
from kgrag.retrieval.shapes import KeywordsData

if TYPE_CHECKING:
    from kgrag.llm.service import ChatService

log = logging.getLogger(__name__)

# A question shorter than this with no keywords is searched for as it is.
SHORT_QUERY_CHARS = 50


@dataclass(slots=True)
class KeywordSet:
    """Keywords and where they came from: caller, llm, cache, heuristic or question."""

    high: list[str] = field(default_factory=list)
    low: list[str] = field(default_factory=list)
    source: str = "caller"
    error: str | None = None

    @property
    def empty(self) -> bool:
        return not self.high and not self.low

    def to_dict(self) -> KeywordsData:
        out: KeywordsData = {
            "high_level": self.high,
            "low_level": self.low,
            "source": self.source,
        }
        if self.error:
            out["error"] = self.error
        return out


def clean_keywords(value: object) -> list[str]:
    """A list of distinct, non-empty strings from whatever the model gave."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, (list, tuple)):
        return []
    seen: set[str] = set()
    out: list[str] = []
    for item in value:
        if isinstance(item, (int, float)) and not isinstance(item, bool):
            item = str(item)
        if not isinstance(item, str):
            continue
        text = " ".join(item.split()).strip(" \"'`")
        if text and text.casefold() not in seen:
            seen.add(text.casefold())
            out.append(text)
    return out


def parse_keywords(text: str) -> tuple[list[str], list[str]]:
    """(high, low) keywords from a model reply, tolerating prose, fences and bad JSON."""
    try:
        data = json_repair.loads(text or "")
    except Exception:  # json_repair raises little, but a reply is untrusted input
        return [], []
    if isinstance(data, list):
        data = next((d for d in data if isinstance(d, dict)), {})
    if not isinstance(data, dict):
        return [], []
    return (
        clean_keywords(data.get("high_level_keywords")),
        clean_keywords(data.get("low_level_keywords")),
    )


async def _from_llm(question: str, chat: ChatService, language: str) -> KeywordSet:
    try:
        result = await chat.chat(
            keywords_messages(question, language=language), role="keywords", json_mode=True
        )
    except ModelError as exc:
        log.warning("keywords call failed, using heuristic keywords: %s", exc)
        high, low = heuristic_keywords(question)
        return KeywordSet(high, low, "heuristic", error=f"keywords call failed: {exc}")
    high, low = parse_keywords(result.text)
    return KeywordSet(high, low, "cache" if result.cached else "llm")


async def question_keywords(
    question: str,
    hl: list[str],
    ll: list[str],
    chat: ChatService | None,
    language: str = "English",
) -> KeywordSet:
    """The keywords to search for.

    Caller-supplied keywords win; otherwise the chat model is asked (for
    keywords in ``language``, the language of the index), or the heuristic
    used when ``chat`` is None. When both lists end up empty a short
    question becomes the low-level keyword (source ``question``).
    """
    if hl or ll:
        kws = KeywordSet(clean_keywords(hl), clean_keywords(ll), "caller")
    elif chat is not None:
        kws = await _from_llm(question, chat, language)
    else:
        kws = KeywordSet(*heuristic_keywords(question), source="heuristic")
    if kws.empty and len(question.strip()) < SHORT_QUERY_CHARS and question.strip():
        kws = KeywordSet([], [question.strip()], "question", kws.error)
    return kws
