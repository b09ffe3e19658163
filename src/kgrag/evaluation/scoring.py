"""Exact match and token F1 of an answer against gold answers, as SQuAD scores them.

English (SQuAD): lower-cased, punctuation and the articles a/an/the
removed, whitespace collapsed; F1 over the words. When the gold answer holds
Chinese (or other CJK) characters, as in CMRC 2018: punctuation (ASCII and
full-width) removed, each CJK character a token and each run of Latin
letters or digits one token; F1 over those tokens. With several gold
answers, the best score counts.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_CJK_RANGES = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK = re.compile(f"[{_CJK_RANGES}]")
_MIXED_TOKEN = re.compile(f"[{_CJK_RANGES}]|[^\\W_{_CJK_RANGES}]+")
_PUNCT = set(string.punctuation)


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def _is_punct(ch: str) -> bool:
    return ch in _PUNCT or unicodedata.category(ch).startswith(("P", "S"))


def normalize(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def tokens(text: str, cjk: bool) -> list[str]:
    """The tokens F1 counts: words (English), or CJK characters and Latin/digit runs."""
    if not cjk:
        return normalize(text).split()
    clean = "".join(" " if _is_punct(ch) else ch for ch in text.lower())
    return _MIXED_TOKEN.findall(clean)


def _f1(predicted: list[str], gold: list[str]) -> float:
    common = sum((Counter(predicted) & Counter(gold)).values())
    if not predicted or not gold or common == 0:
        return float(predicted == gold)  # both empty: a match
    precision, recall = common / len(predicted), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def exact_match(answer: str, gold: Iterable[str]) -> float:
    """1.0 when ``answer`` equals one of ``gold`` after normalisation, else 0.0."""
    return max(
        (float(tokens(answer, has_cjk(g)) == tokens(g, has_cjk(g))) for g in gold), default=0.0
    )


def f1_score(answer: str, gold: Iterable[str]) -> float:
    """The best token F1 of ``answer`` against any of ``gold`` (0.0 without gold)."""
    return max((_f1(tokens(answer, has_cjk(g)), tokens(g, has_cjk(g))) for g in gold), default=0.0)
