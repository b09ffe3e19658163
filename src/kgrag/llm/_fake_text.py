"""Text heuristics behind the fake chat provider: names, sentences, fences."""

from __future__ import annotations

import re
import zlib

_FENCE_RE = re.compile(r"```[^\n]*\n?(.*?)(?:```|\Z)", re.S)
_CAP_RUN_RE = re.compile(r"\b[A-Z][\w'’-]*(?:[ \t]+[A-Z][\w'’-]*)*")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_QUESTION_RE = re.compile(r"(?:Query|Question)\s*:\s*", re.I)

TYPES = ("Person", "Organization", "Location", "Event", "Concept")

STOPWORDS = frozenset(
    """
a about above after again against all also although am an and any are as at be because been
before being below between both but by can could did do does doing down during each else
even ever every few for from further had has have having he her here hers herself him himself
his how however i if in into is it its itself just let like many may me might more most much
must my myself no nor not now of off on once one only or other our ours ourselves out over own
perhaps same she should since so some still such than that the their theirs them themselves
then there these they this those though through thus to too under until up upon us very was we
were what when where whether which while who whom whose why will with within without would yes
yet you your yours yourself
""".split()
)


def last_fenced(text: str) -> str | None:
    """The content of the last ``` fenced block in ``text``, or None."""
    blocks = _FENCE_RE.findall(text)
    return blocks[-1].strip() if blocks else None


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_RE.split(text) if s and s.strip()]


def names_in(sentence: str) -> list[str]:
    """Runs of capitalised words, leading stopwords dropped, in order, unique."""
    found: dict[str, None] = {}
    for match in _CAP_RUN_RE.finditer(sentence):
        words = [w.rstrip("'’-") for w in match.group(0).split()]
        words = [w[:-2] if w.endswith(("'s", "’s")) else w for w in words]
        while words and words[0].lower() in STOPWORDS:
            words.pop(0)
        if words and len(words[0]) > 1:
            found[" ".join(words)] = None
    return list(found)


def content_words(text: str, exclude: set[str] | None = None) -> list[str]:
    """Lower-case words of 3+ letters that are not stopwords, first-seen order."""
    skip = {w.lower() for w in exclude or ()}
    seen: dict[str, None] = {}
    for word in _WORD_RE.findall(text):
        low = word.lower()
        if low not in STOPWORDS and low not in skip:
            seen[low] = None
    return list(seen)


def type_of(name: str) -> str:
    return TYPES[zlib.crc32(name.encode("utf-8")) % len(TYPES)]


def clean(field: str) -> str:
    """A record field without delimiters or line breaks."""
    for bad in ("<|#|>", "<|COMPLETE|>", "\r", "\n"):
        field = field.replace(bad, " ")
    return " ".join(field.split())


def question_of(text: str) -> str:
    """The question in a prompt: after the last Query:/Question: marker, else fenced, else all."""
    parts = _QUESTION_RE.split(text)
    if len(parts) > 1:
        return parts[-1].strip()
    return last_fenced(text) or text.strip()


def clip_words(text: str, limit: int) -> str:
    words = text.split()
    return " ".join(words[:limit]) + (" ..." if len(words) > limit else "")
