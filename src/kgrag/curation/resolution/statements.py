"""What the text itself says about two names: one thing or two.

Two names in one sentence are, as a rule, two different things ("Bob
Cratchit and Mrs. Cratchit"): strong evidence against a merge. The
exception is a sentence that *states* the alias: "International Business
Machines (IBM)", "Ebenezer Scrooge, known as Scrooge", "姓刘，名备，字玄德".
Those statements are also scanned for in every chunk to propose pairs no
name rule finds (a courtesy name shares no character with the given name).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

_SENTENCE = re.compile(r"(?<=[.!?;。！？；])\s*|\n+")
_LINK_EN = r"\s*(?:\(|,\s*(?:also |better |commonly )?(?:known as|called|nicknamed|a\.k\.a\.|aka|née|or)\s+)\s*"
_LINK_ZH = r"\s*[，,]?\s*(?:字|表字|又名|又称|号|简称|别名|人称)\s*"
_COURTESY = re.compile(r"姓(\w)[，,]?名(\w{1,2})[，,]?(?:表)?字(\w{2})")
_SELF_COURTESY = re.compile(r"(\w{2,3})[，,]?字(\w{2})")
MAX_SENTENCES = 400


_ZH_BREAK = re.compile(r"(?<=[\u4e00-\u9fff，、：；“”])\s+(?=[\u4e00-\u9fff，。、“”])")


def sentences(text: str) -> Iterator[str]:
    """Sentences of ``text``; Chinese lines broken mid-sentence are joined first."""
    for piece in _SENTENCE.split(_ZH_BREAK.sub("", text)):
        if piece and piece.strip():
            yield piece.strip()


def _pattern(name: str) -> str:
    body = re.escape(name)
    return rf"(?<!\w){body}(?!\w)" if name[:1].isascii() else body


def _spans(sentence: str, name: str) -> list[tuple[int, int]]:
    flags = re.IGNORECASE if name.isascii() else 0
    return [m.span() for m in re.finditer(_pattern(name), sentence, flags)]


def _alone(sentence: str, short: list[tuple[int, int]], long: list[tuple[int, int]]) -> list[int]:
    """Starts of the shorter name's mentions that are not part of a longer name.

    Outside the longer name's mentions, and (Latin script) not right after
    a capitalised word: "Williams" in "Hank Williams" is part of a name.
    """
    out = []
    for s, e in short:
        if any(ls <= s and e <= le for ls, le in long):
            continue
        before = sentence[:s].rstrip().rsplit(" ", 1)[-1] if s else ""
        if before[:1].isupper() and s > 0 and sentence[s - 1] == " ":
            continue
        out.append(s)
    return out


def _states_alias(sentence: str, a: str, b: str) -> bool:
    link = _LINK_ZH if not (a.isascii() and b.isascii()) else _LINK_EN
    for x, y in ((a, b), (b, a)):
        flags = re.IGNORECASE if x.isascii() and y.isascii() else 0
        if re.search(_pattern(x) + link + _pattern(y), sentence, flags):
            return True
    return False


@dataclass(slots=True)
class Together:
    """Sentences holding both names: as two things, or as a stated alias."""

    apart: str | None = None
    alias: str | None = None
    common: str | None = None  # the shorter name used as a common noun: "the Pact"


def together(texts: Iterable[str], a: str, b: str, *, anaphora: bool = False) -> Together:
    """Read the shared chunks' sentences for ``a`` and ``b`` side by side.

    ``anaphora``: the shorter name may stand for the longer one said earlier
    in the sentence ("with Adam Duritz, ... by Duritz and his band").
    """
    short, long = sorted((a, b), key=len)
    found = Together()
    seen = 0
    for text in texts:
        found.common = found.common or _common_noun(text, short)
        for sentence in sentences(text):
            seen += 1
            if seen > MAX_SENTENCES:
                return found
            l_spans = _spans(sentence, long)
            alone = _alone(sentence, _spans(sentence, short), l_spans) if l_spans else []
            if not alone:
                continue
            if _states_alias(sentence, a, b):
                found.alias = found.alias or sentence
            elif not (anaphora and min(alone) > l_spans[0][0]):
                found.apart = found.apart or sentence
    return found


def _common_noun(text: str, name: str) -> str | None:
    """``name`` (one Latin word) after "the" or "a", ending a phrase: a thing ("the Pact
    was"), not a surname."""
    if not name.isascii() or not name.isalpha():
        return None
    end = r"(?=\s*[,.;:!?)]|\s+(?:is|was|are|were|has|had)\b)"  # not "the Graham family"
    match = re.search(rf"(?<!\w)(?:the|a|an)\s+{re.escape(name)}{end}", text, re.IGNORECASE)
    return text[max(0, match.start() - 60) : match.end() + 60] if match else None


def stated_aliases(text: str) -> Iterator[tuple[str, str, str]]:
    """(name, alias, sentence) stated in ``text``: Chinese courtesy names for now.

    English alias statements are found pairwise (:func:`together`); the
    pairs they join are already proposed by acronym and containment rules.
    Whitespace is dropped first: Chinese text breaks lines mid-sentence.
    """
    text = re.sub(r"\s+", "", text)
    for match in _COURTESY.finditer(text):
        surname, given, courtesy = match.groups()
        full = surname + given
        yield full, courtesy, match.group(0)
        yield full, surname + courtesy, match.group(0)
    for match in _SELF_COURTESY.finditer(text):
        yield match.group(1), match.group(2), match.group(0)
