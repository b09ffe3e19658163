"""Keywords without a language model.

Used when no chat model is configured. Capitalised phrases ("Ebenezer
Scrooge", "Bank of England", "FW-A") become low-level keywords and the
remaining runs of content words ("main themes", "story") high-level ones.
Text with CJK characters is segmented with jieba: names of people, places
and organisations are low-level, other nouns and verbs high-level.
"""

from __future__ import annotations

import itertools
import re

_STOP = frozenset(
    """
a about above after again against all also am an and any are aren't as at be because been before
being below between both but by can can't could did didn't do does doesn't doing don't down during
each either else ever every few for from further get gets got had has have having he her here hers
herself him himself his how however i if in into is isn't it its itself just least less let like
made make many may me might more most much must my myself neither no nor not now of off often on
once only or other our ours ourselves out over own per please quite rather really said same say
says she should so some such tell than that the their theirs them themselves then there these they
this those though through thus to too under until up upon us very via was wasn't we were weren't
what whatever when where whether which while who whom whose why will with within without would yet
you your yours yourself yourselves explain describe list give show know known think find found
one two three kind kinds sort thing things way ways
""".split()
)

# Words allowed inside a capitalised phrase: "Bank of England", "Tale of Two Cities".
_CONNECTORS = frozenset({"of", "the", "de", "la", "von", "van", "and", "&"})

_TOKEN = re.compile(r"[\w][\w'’\-.]*[\w]|[\w]|[^\w\s]")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_LATIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-.]*")
_NAME_FLAGS = ("nr", "ns", "nt", "nz")


def _is_capitalised(token: str) -> bool:
    """Names, codes and numbers: "Scrooge", "FW-A", "v2", "1844"."""
    return token[:1].isupper() or any(c.isdigit() for c in token)


def _dedupe(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = item.casefold()
        if item and key not in seen:
            seen.add(key)
            out.append(item)
    return out


_JOINERS = frozenset({"and", "&"})
_POSSESSIVE = re.compile(r"['’]s$", re.I)


def _flush(run: list[str], into: list[str]) -> None:
    """Append the phrase in ``run`` (and, when "and" joins two names, each name) to ``into``."""
    while run and run[-1].lower() in _CONNECTORS:
        run.pop()
    if run:
        run[-1] = _POSSESSIVE.sub("", run[-1]) or run[-1]  # "Marley's" names Marley
        into.append(" ".join(run))
        cuts = [i for i, w in enumerate(run) if w.lower() in _JOINERS]
        if cuts:  # "Marian Gold and Jung Eun-ji": two names, or one ("Procter and Gamble")
            bounds = [-1, *cuts, len(run)]
            into.extend(
                " ".join(run[a + 1 : b]) for a, b in itertools.pairwise(bounds) if b > a + 1
            )
    run.clear()


def _latin_keywords(text: str) -> tuple[list[str], list[str]]:
    """(high-level, low-level) keywords of text in a Latin script."""
    low: list[str] = []
    high: list[str] = []
    name: list[str] = []
    words: list[str] = []
    for token in _TOKEN.findall(text):
        lower = token.lower().strip(".")
        if not token[0].isalnum():
            _flush(name, low)
            _flush(words, high)
        elif _is_capitalised(token) and lower not in _STOP:
            _flush(words, high)
            name.append(token.strip("."))
        elif name and lower in _CONNECTORS:
            name.append(token)
        elif lower in _STOP or len(lower) < 3:
            _flush(name, low)
            _flush(words, high)
        else:
            _flush(name, low)
            words.append(lower)
            if len(words) == 3:
                _flush(words, high)
    _flush(name, low)
    _flush(words, high)
    return high, low


def _cjk_keywords(text: str) -> tuple[list[str], list[str]]:
    """(high-level, low-level) keywords of text with CJK characters (jieba)."""
    import logging

    import jieba
    import jieba.posseg as pseg

    jieba.setLogLevel(logging.WARNING)
    high, low = _latin_keywords(" , ".join(_LATIN.findall(text)))
    for pair in pseg.lcut(_LATIN.sub(" ", text)):
        word, flag = pair.word.strip(), pair.flag
        if len(word) < 2 or not _CJK.search(word):
            continue
        if flag.startswith(_NAME_FLAGS):
            low.append(word)
        elif flag.startswith("n") or flag == "vn":
            high.append(word)
    return high, low


def search_text(question: str) -> str:
    """``question`` without stop words, for full-text search (CJK text unchanged)."""
    if _CJK.search(question):
        return question
    words = [t for t in _TOKEN.findall(question) if t[0].isalnum() and t.lower() not in _STOP]
    return " ".join(words) or question


def heuristic_keywords(question: str) -> tuple[list[str], list[str]]:
    """(high-level, low-level) keywords of ``question`` without an LLM."""
    if _CJK.search(question):
        high, low = _cjk_keywords(question)
    else:
        high, low = _latin_keywords(question)
    return _dedupe(high), _dedupe(low)
