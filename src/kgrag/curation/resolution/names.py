"""Names reduced to what identifies them, and the parts that tell two things apart.

Blocking compares *keys*, not raw names: a key is the name with case,
spacing, punctuation, diacritics (NFKD), full/half width (NFKC),
traditional script (OpenCC ``t2s``, when installed), honorifics and titles,
corporate suffixes and possessives taken away. :class:`Name` keeps what
was taken away too, because that is evidence: ``Mr.`` against ``Mrs.``,
``Inc.`` on one side only, ``Past`` against ``Present``, ``v1`` against ``v2``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

# honorifics and titles dropped from the key; the gendered ones are kept as evidence
FEMALE = frozenset({"mrs", "miss", "ms", "lady", "madam", "madame", "mme", "mlle", "dame"})
MALE = frozenset({"mr", "mister", "sir", "lord", "master", "monsieur", "herr"})
TITLES = frozenset(
    {"dr", "doctor", "prof", "professor", "rev", "reverend", "capt", "captain", "gen", "general"}
    | {"col", "colonel", "sgt", "president", "senator", "judge", "old", "young", "uncle", "aunt"}
    | {"king", "queen", "prince", "princess", "father", "brother", "sister"}
)
HONORIFICS = FEMALE | MALE | TITLES
ZH_TITLES = ("先生", "将军", "丞相", "太守", "夫人", "小姐", "大人", "主公", "皇帝", "公子")
ZH_FEMALE = ("夫人", "小姐")
CORPORATE = frozenset(
    {"inc", "incorporated", "ltd", "limited", "llc", "plc", "corp", "corporation", "co"}
    | {"company", "gmbh", "ag", "sa", "srl", "bv", "nv", "ab", "oy", "kk", "group", "holdings"}
)
ZH_CORPORATE = ("股份有限公司", "有限责任公司", "有限公司", "集团", "公司")
# words that name one of several siblings: a difference in them is a different thing
QUALIFIERS = frozenset(
    {"past", "present", "future", "yet", "come", "senior", "junior", "sr", "jr", "elder"}
    | {"younger", "north", "south", "east", "west", "northern", "southern", "eastern"}
    | {"western", "upper", "lower", "new", "old", "first", "second", "third", "fourth"}
    | {"last", "final", "mini", "pro", "max", "plus", "lite", "classic", "original", "remix"}
)
# abbreviations spelt out, so "St. Paul" and "Saint Paul" share a key
EXPAND = {"st": "saint", "mt": "mount", "ft": "fort", "&": "and"}
STOPWORDS = frozenset({"of", "the", "and", "for", "in", "on", "at", "to", "a", "an", "de", "&"})
_ROMAN = re.compile(r"^(?=[ivxlcdm]+$)m{0,3}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$")
_NUMBERISH = re.compile(r"^(v?\d+(\.\d+)*[a-z]?|\d+(st|nd|rd|th)|[a-z])$")
_PAREN = re.compile(r"\s*[(（]([^)）]*)[)）]\s*$")
_SPLIT = re.compile(r"[^\w]+", re.UNICODE)


@lru_cache(maxsize=1)
def _converter() -> object | None:
    """OpenCC's traditional-to-simplified converter, or None without the package."""
    try:
        import opencc
    except ImportError:  # the base install has it; a stripped one loses only this rule
        return None
    return opencc.OpenCC("t2s")


def simplified(text: str) -> str:
    """``text`` in simplified Chinese characters (unchanged without OpenCC or CJK)."""
    conv = _converter()
    if conv is None or not any(is_cjk(ch) for ch in text):
        return text
    return str(conv.convert(text))  # type: ignore[attr-defined]


def is_cjk(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf"


def fold(text: str) -> str:
    """Width, case and diacritics folded: ``Ｂｅｙｏｎｃé`` -> ``beyonce``."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return text.casefold().replace("ß", "ss")


def _possessive(text: str) -> str:
    return re.sub(r"(?<=\w)['’]s?\b", "", text)


@dataclass(frozen=True, slots=True)
class Name:
    """One entity name, parsed."""

    raw: str
    key: str  # what blocking compares: folded, stripped, simplified, words joined by spaces
    tokens: tuple[str, ...]  # the key's words (for CJK: the key itself as one token)
    words: tuple[str, ...]  # every folded word, titles and suffixes included (for acronyms)
    gender: str  # "f", "m" or "" from honorifics
    corporate: bool  # a corporate suffix was dropped
    qualifier: str  # a trailing parenthetical ("film" in "Paris (film)")
    cjk: bool

    @property
    def distinct(self) -> frozenset[str]:
        """Tokens that may tell siblings apart: numbers, letters, romans, qualifier words."""
        return frozenset(t for t in self.tokens if is_distinguishing(t))


def is_distinguishing(token: str) -> bool:
    return bool(_NUMBERISH.match(token) or _ROMAN.match(token) or token in QUALIFIERS)


def acronyms(name: Name) -> set[str]:
    """Initials of a multi-word name: ``International Business Machines``: ibm.

    With and without stop words, titles and suffixes (``General Electric``:
    ge, ``National Broadcasting Company``: nbc), and of its last three or
    more words (``Nova Scotia New Democratic Party``: ndp).
    """
    if name.cjk:
        return set()
    out = set()
    for words in (name.words, name.tokens):
        content = [w for w in words if w not in STOPWORDS]
        for seq in (content, list(words)):
            if len(seq) >= 2:
                out.add("".join(w[0] for w in seq))
            out.update("".join(w[0] for w in seq[-k:]) for k in range(3, len(seq)))
    return out


def _strip_zh(text: str) -> tuple[str, str, bool]:
    gender, corporate = "", False
    for suffix in ZH_CORPORATE:
        if text.endswith(suffix) and len(text) > len(suffix) + 1:
            text, corporate = text[: -len(suffix)], True
            break
    for title in ZH_TITLES:
        if text.endswith(title) and len(text) > len(title):
            gender = "f" if title in ZH_FEMALE else gender
            text = text[: -len(title)]
            break
    return text, gender, corporate


def _strip_words(words: list[str]) -> tuple[list[str], str, bool]:
    gender, corporate = "", False
    while len(words) > 1 and words[0] in HONORIFICS:
        gender = "f" if words[0] in FEMALE else ("m" if words[0] in MALE else gender)
        words = words[1:]
    while len(words) > 1 and words[-1] in CORPORATE:
        words, corporate = words[:-1], True
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    if len(words) > 1 and all(len(w) == 1 for w in words):  # U.S. -> us, I.B.M. -> ibm
        words = ["".join(words)]
    return words, gender, corporate


@lru_cache(maxsize=200_000)
def parse(raw: str) -> Name:
    """Parse ``raw`` into a :class:`Name` (cached: names repeat across pairs)."""
    text, qualifier = raw.strip(), ""
    match = _PAREN.search(text)
    if match and match.start() > 0:
        qualifier, text = fold(match.group(1)).strip(), text[: match.start()]
    text = simplified(_possessive(fold(text)))
    if any(is_cjk(ch) for ch in text):
        core = "".join(ch for ch in text if is_cjk(ch) or ch.isalnum())
        core, gender, corporate = _strip_zh(core)
        return Name(raw, core, (core,), (core,), gender, corporate, qualifier, True)
    every = [EXPAND.get(w, w) for w in _SPLIT.split(text) if w]
    words, gender, corporate = _strip_words(list(every))
    return Name(
        raw, " ".join(words), tuple(words), tuple(every), gender, corporate, qualifier, False
    )


def spelling_only(a: Name, b: Name) -> bool:
    """The names differ only in case, spacing, punctuation, width, diacritics or script.

    Not when one is written in capitals and the other is not: ``ILM`` and
    ``Ilm``, ``UN`` and ``Un`` are an acronym and a word.
    """
    if a.words != b.words or a.qualifier != b.qualifier:
        return False
    caps = [r.isupper() and len(r.replace(".", "")) <= 6 for r in (a.raw, b.raw)]
    return caps[0] == caps[1]
