"""Whether a text names an object or a place, in English or Chinese.

Latin names are compared word by word, case-folded, a plural ``s``
ignored: "Log Platform" is named by "the log platforms". A name with CJK
characters is named when it occurs in the text.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[0-9A-Za-z\u00c0-\u024f]+(?:[-'’][0-9A-Za-z]+)*")
_CJK = re.compile(r"[\u3400-\u9fff]")


def _stem(word: str) -> str:
    word = word.casefold()
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


@lru_cache(maxsize=8192)
def words_of(text: str) -> frozenset[str]:
    """The case-folded, singular words of ``text``."""
    return frozenset(_stem(w) for w in _WORD.findall(text))


def names(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` (all its words, or its CJK string)."""
    if not name.strip():
        return False
    if _CJK.search(name):
        return name.casefold() in text.casefold()
    wanted = words_of(name)
    low = _folded(text)
    return bool(wanted) and all(_word(w).search(low) for w in wanted)


@lru_cache(maxsize=4096)
def _folded(text: str) -> str:
    return text.casefold()


@lru_cache(maxsize=4096)
def _word(stem: str) -> re.Pattern[str]:
    """The stem as a whole word, a plural ``s`` allowed."""
    return re.compile(rf"(?<![0-9a-z\u00e0-\u024f]){re.escape(stem)}s?(?![0-9a-z\u00e0-\u024f])")


def in_question(question: str, name: str) -> bool:
    """Whether ``name`` is written in ``question`` as a whole (words in order, any case).

    Called for every retrieved entity name: a substring test of the first
    word rules most names out before any pattern is built.
    """
    if _CJK.search(name):
        return name in question
    parts = tuple(name.split())
    if not parts or parts[0].casefold() not in _folded(question):
        return False
    return _phrase(parts).search(question) is not None


@lru_cache(maxsize=8192)
def _phrase(parts: tuple[str, ...]) -> re.Pattern[str]:
    body = r"\s+".join(map(re.escape, parts))
    return re.compile(rf"(?<![0-9A-Za-z]){body}(?![0-9A-Za-z])", re.I)
