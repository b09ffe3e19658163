"""Normalisation of extracted fields: names, types, keywords, descriptions.

Entity names are graph keys, so they are normalised the same way
everywhere (and stay case-sensitive):

* HTML line tags (``<p>``, ``<br/>``) and control / zero-width characters go;
* full-width ASCII forms become ASCII (``Ａｐｐｌｅ（中国）`` -> ``Apple(中国)``),
  CJK quotes and brackets become their ASCII counterparts;
* whitespace is collapsed, and removed entirely between two CJK characters;
* surrounding quotes and balanced surrounding brackets are stripped;
* the result is cut to :data:`MAX_NAME_CHARS` characters.

A name with no letter at all (only digits, punctuation or symbols) is
rejected: such rows are noise such as "2024" or "3.4%".

Entity types: with an allow-list (what the extractor offered the model)
a type is matched case-, space- and underscore-insensitively and given the
list's spelling; anything else becomes :data:`OTHER_TYPE`, so the graph
only ever holds types that were offered. Without an allow-list the type
is kept but written in CamelCase (``natural object`` -> ``NaturalObject``).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence

MAX_NAME_CHARS = 256
OTHER_TYPE = "Other"
MAX_WEIGHT = 100.0

_HTML_LINE_TAGS = re.compile(r"</?\s*(?:p|br)\s*/?\s*>", re.IGNORECASE)
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_GAP = re.compile(f"(?<=[{_CJK}])\\s+(?=[{_CJK}])")
_PUNCT_MAP = str.maketrans(
    {
        "\u3000": " ",
        "“": '"',
        "”": '"',
        "„": '"',
        "‟": '"',
        "「": '"',
        "」": '"',
        "『": '"',
        "』": '"',
        "‘": "'",
        "’": "'",
        "‚": "'",
        "‛": "'",
        "【": "[",
        "】": "]",
        "〔": "(",
        "〕": ")",
        "〖": "[",
        "〗": "]",
    }
)
_QUOTES = "\"'`"
_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">", "《": "》", "〈": "〉"}
_TRAILING = "。，、；：,;:"
_TYPE_SPLIT = re.compile(r"[,，、;；/|]")
_KEYWORD_SPLIT = re.compile(r"[,，、;；\n]")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def as_text(value: object) -> str:
    """Any JSON-ish value as text: lists are comma-joined, mappings dropped."""
    if value is None or isinstance(value, dict):
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(t for t in (as_text(v) for v in value) if t)
    return value if isinstance(value, str) else str(value)


def to_half_width(text: str) -> str:
    """Full-width ASCII forms (U+FF01..U+FF5E, U+3000) to plain ASCII."""
    return "".join(
        chr(ord(c) - 0xFEE0) if "\uff01" <= c <= "\uff5e" else c for c in text
    ).translate(_PUNCT_MAP)


def drop_control(text: str) -> str:
    """Control characters become spaces; format (zero-width, bidi) characters go."""
    out = []
    for c in text:
        cat = unicodedata.category(c)
        if cat == "Cc":
            out.append(" ")
        elif cat not in ("Cf", "Cs", "Co", "Cn"):
            out.append(c)
    return "".join(out)


def _strip_wrappers(text: str, loose_quotes: bool = True) -> str:
    """Strip surrounding quotes and balanced surrounding brackets, repeatedly.

    With ``loose_quotes`` a quote at either end goes even if unmatched (for
    names); otherwise only a matching pair of quotes is removed.
    """
    while text:
        before = text
        text = text.strip()
        if loose_quotes:
            text = text.strip(_QUOTES).strip()
        elif len(text) >= 2 and text[0] in _QUOTES and text[-1] == text[0]:
            text = text[1:-1].strip()
        if len(text) >= 2 and _PAIRS.get(text[0]) == text[-1] and _balanced_span(text):
            text = text[1:-1]
        if text == before:
            break
    return text


def _balanced_span(text: str) -> bool:
    """True when the bracket at 0 closes exactly at the last character."""
    opener, closer = text[0], text[-1]
    depth = 0
    for i, c in enumerate(text):
        depth += (c == opener) - (c == closer)
        if depth == 0:
            return i == len(text) - 1
    return False


def clean_field(value: object) -> str:
    """A raw field as single-spaced text without control characters."""
    return " ".join(drop_control(as_text(value)).split())


def normalize_name(value: object) -> str:
    """The canonical form of an entity name ("" when unusable)."""
    text = _HTML_LINE_TAGS.sub(" ", as_text(value))
    text = " ".join(to_half_width(drop_control(text)).split())
    text = _CJK_GAP.sub("", text)
    text = _strip_wrappers(text).rstrip(_TRAILING).strip()
    text = _strip_wrappers(text[:MAX_NAME_CHARS])
    return text if any(c.isalpha() for c in text) else ""


def type_key(value: str) -> str:
    """Comparison key of a type: lower case, no spaces, underscores or hyphens."""
    return re.sub(r"[\s_\-]+", "", value).casefold()


def _camel(text: str) -> str:
    words = [w for w in re.split(r"[\s_\-]+", text) if w]
    return "".join(
        w.capitalize() if w.isupper() or w.islower() else w[0].upper() + w[1:] for w in words
    )


def normalize_type(value: object, allowed: Sequence[str] | None = None) -> str:
    """Canonical entity type; see the module docstring for the rules."""
    text = _strip_wrappers(to_half_width(clean_field(value)))
    text = _strip_wrappers(_TYPE_SPLIT.split(text, maxsplit=1)[0])
    if allowed is None:
        return _camel(text)[:64] or OTHER_TYPE
    wanted = {type_key(t): t for t in allowed}
    return wanted.get(type_key(text), OTHER_TYPE)


def normalize_keywords(value: object) -> str:
    """Comma-separated keywords, de-duplicated in order, ASCII commas."""
    words: list[str] = []
    folded: set[str] = set()
    for part in _KEYWORD_SPLIT.split(to_half_width(as_text(value))):
        word = _strip_wrappers(clean_field(part))
        if word and word.casefold() not in folded:
            folded.add(word.casefold())
            words.append(word)
    return ", ".join(words)


def clean_description(value: object) -> str:
    """A description on one line, without a wrapping pair of quotes."""
    return _strip_wrappers(clean_field(value), loose_quotes=False)


def parse_weight(value: object, default: float = 1.0) -> float:
    """A positive, finite relation weight (capped at :data:`MAX_WEIGHT`), else ``default``."""
    if isinstance(value, bool):
        return default
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        match = _NUMBER.search(as_text(value))
        if not match:
            return default
        number = float(match.group())
    if not math.isfinite(number) or number <= 0:
        return default
    return min(number, MAX_WEIGHT)


def is_number(value: object) -> bool:
    """True when ``value`` is a bare number (used to spot a weight column)."""
    return bool(_NUMBER.fullmatch(clean_field(value)))
