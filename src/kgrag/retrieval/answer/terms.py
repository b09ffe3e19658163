"""Index terms of questions and sentences, for lexical ranking.

Latin-script words are lower-cased, stripped of ``'s`` and of common
suffixes (``warns``, ``warned``, ``warning`` -> ``warn``), stopwords left
out; a run of CJK characters gives its character bigrams (a lone
character itself), which needs no word segmenter.
"""

from __future__ import annotations

import re
from itertools import pairwise

_TOKEN = re.compile(r"[\u3400-\u9fff]+|[^\W_]+(?:['’][^\W_]+)*")
_CJK = re.compile(r"[\u3400-\u9fff]")
_CAPITALISED = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of|the|de|von|van|and|[A-Z][\w'’-]*))*")

STOPWORDS = frozenset(
    """
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing down during each either few for
from further had has have having he her here hers him his how i if in into is it its itself
just me more most my no nor not now of off on once only or other our out over own same she
should so some such than that the their them then there these they this those through to too
under until up upon very was we were what when where which while who whom whose why will with
would you your yes yet one ones also whether within without among many much per via
name named called known
""".split()
)
# Chinese function characters that carry no topic on their own.
_CJK_STOP = frozenset("的了是在和与及或也就都而被把对从为以之于其这那个么吗呢吧啊")


def stem(word: str) -> str:
    """A light suffix stripper: plurals, ``-ed``, ``-ing``, ``-ly``; short words kept."""
    for suffix, keep in (("'s", 1), ("’s", 1), ("ies", 3), ("ing", 4), ("ed", 4), ("ly", 4)):
        if word.endswith(suffix) and len(word) - len(suffix) >= keep:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 5 and word.endswith("e"):
        word = word[:-1]
    return word


def _cjk_terms(run: str) -> list[str]:
    chars = [c for c in run if c not in _CJK_STOP]
    if len(chars) == 1:
        return chars
    return [a + b for a, b in pairwise(chars)]


def terms(text: str) -> list[str]:
    """The index terms of ``text``, in order, repeats kept."""
    out: list[str] = []
    for token in _TOKEN.findall(text):
        if _CJK.match(token):
            out.extend(_cjk_terms(token))
            continue
        word = token.lower()
        if word not in STOPWORDS and (len(word) > 1 or word.isdigit()):
            out.append(stem(word))
    return out


def names(text: str) -> set[str]:
    """Terms of the capitalised runs of ``text`` (names), not counting its first word."""
    found: set[str] = set()
    for m in _CAPITALISED.finditer(text):
        if m.start() == 0 and " " not in m.group(0):
            continue
        found.update(terms(m.group(0)))
    return found
