"""Sentences of the retrieved chunks, for the extractive answer.

:func:`split_sentences` cuts a text at sentence ends (``. ! ?`` before a
capital or digit, ``。！？；``), blank lines and list items; a short line
without closing punctuation that starts a paragraph (a title or heading)
is cut off on its own. :func:`context_sentences` numbers every sentence
of the context by chunk and position, so that a quote can bring its
neighbour; :func:`needs_antecedent` says when it must (a sentence opening
with a pronoun cannot be read alone).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_SENTENCE_END = re.compile(
    r"(?<=[.!?])\s+(?=[\"'“‘(\[]?[A-Z0-9])"
    r"|(?<=[.!?][\"'”’)])\s+(?=[\"'“‘(\[]?[A-Z0-9])"
    r"|(?<=[。！？；])(?![”’」』）])|(?<=[。！？；][”’」』）])"
    r"|\n\s*\n|\n(?=\s*[-*•#])"
)
# A paragraph's first line that is a heading: a few words, no closing punctuation.
_HEADING = re.compile(r"^[^\n.!?。！？；:：,，]{1,80}$")
_CJK = re.compile(r"[\u3400-\u9fff]")
# Editorial markup standing for something else: [Illustration: ...], [Footnote: ...].
_MARKUP = re.compile(r"^\[[A-Z][a-z]+:")
# Abbreviations after which a full stop does not end the sentence.
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st prof sr jr vs no gen col lt sgt capt rev fig inc ltd co mt ft".split()
)
ANAPHORS = frozenset(
    "he she it they this these those that his her its their him them such both".split()
)
# Inside quotation marks, a speaker: the sentence before says who.
_SPEAKERS = frozenset("i we you my our your".split())
_OPENING_QUOTE = ("'", '"', "“", "‘", "「", "『")
_CJK_ANAPHORS = ("他", "她", "它", "这", "該", "该", "此", "其", "那")
_FIRST_WORD = re.compile(r"[\"'“‘(\[]*([A-Za-z]+)")


@dataclass(frozen=True, slots=True)
class Sentence:
    """One piece of the context: its text, chunk (context order), position there, and kind.

    ``kind`` is ``sentence`` (may be quoted), ``heading`` (a title: its words
    are the context of what follows), ``markup`` ([Illustration: ...]),
    ``short`` (too short to quote alone) or ``repeat`` (quotable earlier).
    """

    text: str
    chunk: int
    position: int
    kind: str = "sentence"

    @property
    def quotable(self) -> bool:
        return self.kind == "sentence"

    @property
    def heading(self) -> bool:
        return self.kind == "heading"

    @property
    def readable(self) -> bool:
        """Whether it may stand before a quote as its antecedent."""
        return self.kind not in ("heading", "markup")


def _heading_lines(paragraph: str) -> list[str]:
    """``paragraph`` with a heading-like first line cut off as its own piece."""
    first, sep, rest = paragraph.strip().partition("\n")
    first, rest = first.strip(), rest.strip()
    if sep and rest and not rest[0].islower() and _HEADING.match(first) and len(first) <= 60:
        return [first, rest]
    return [paragraph]


def _joined_abbreviations(pieces: list[str]) -> list[str]:
    """Pieces split after an abbreviation (``Mr.``, ``St.``) joined back to the next one."""
    out: list[str] = []
    for piece in pieces:
        if out and _ends_with_abbreviation(out[-1]):
            out[-1] = out[-1] + " " + piece
        else:
            out.append(piece)
    return out


def _ends_with_abbreviation(text: str) -> bool:
    words = text.rstrip().rsplit(None, 1)
    if not words or not words[-1].endswith("."):
        return False
    word = words[-1][:-1].lstrip("\"'“‘(").lower()
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())


def _pieces(text: str) -> list[tuple[str, bool]]:
    """``(piece, is_heading)`` in order, whitespace-normalised."""
    out: list[tuple[str, bool]] = []
    for paragraph in re.split(r"\n\s*\n", text):
        parts = _heading_lines(paragraph)
        heading = len(parts) == 2
        for i, part in enumerate(parts):
            if heading and i == 0:
                out.append((" ".join(part.split()), True))
                continue
            raw = [p for p in _SENTENCE_END.split(part) if p and p.strip()]
            out.extend(
                (" ".join(p.split()).strip(" -*•#"), False) for p in _joined_abbreviations(raw)
            )
    return [(p, h) for p, h in out if p]


def _long_enough(sentence: str) -> bool:
    return len(sentence) >= 12 or (len(sentence) >= 4 and bool(_CJK.search(sentence)))


def split_sentences(text: str) -> list[str]:
    """Sentences and list items of ``text``, whitespace-normalised (headings left out)."""
    return [p for p, heading in _pieces(text) if not heading and _long_enough(p)]


def _kind(piece: str, heading: bool, seen: set[str]) -> str:
    if heading:
        return "heading"
    if _MARKUP.match(piece):
        return "markup"
    if not _long_enough(piece):
        return "short"
    return "repeat" if piece in seen else "sentence"


def context_sentences(texts: Sequence[str], limit: int) -> list[Sentence]:
    """The first ``limit`` pieces of ``texts`` (chunk contents, context order), numbered.

    Every piece keeps its position, so neighbours in the list are neighbours
    in the text; a sentence seen in an earlier chunk is a ``repeat``.
    """
    seen: set[str] = set()
    out: list[Sentence] = []
    for chunk, text in enumerate(texts):
        for position, (piece, heading) in enumerate(_pieces(text)):
            out.append(Sentence(piece, chunk, position, _kind(piece, heading, seen)))
            seen.add(piece)
            if len(out) >= limit:
                return out
    return out


def needs_antecedent(sentence: str) -> bool:
    """Whether ``sentence`` opens with a pronoun or anaphor (He, It, This, 他, 这...),
    or is quoted speech opening with I / you / we (its speaker is named before it)."""
    if sentence.startswith(_CJK_ANAPHORS):
        return True
    m = _FIRST_WORD.match(sentence)
    if m is None:
        return False
    word = m.group(1).lower()
    return word in ANAPHORS or (word in _SPEAKERS and sentence.startswith(_OPENING_QUOTE))
