"""The sentence that says what the sources do not cover.

Written only when a qualifier (model, version, date, year, protocol,
place, quantity) is not covered; plain objects come from keywords, too
loose to call anything missing. Conflicting items explain the gap first,
group by group ("The sources describe TLS for firmware v1 only, not for
firmware v2."); a constraint still open is then present without applying
("The sources mention FW-B, but not for firmware v2.") or absent
("Nothing in the sources covers 2021."). Chinese questions get Chinese
sentences.
"""

from __future__ import annotations

from collections.abc import Sequence

from kgrag.retrieval.conditions.check import Judgement
from kgrag.retrieval.conditions.constraint import OBJECT_LIKE, Constraint
from kgrag.retrieval.conditions.coverage import Coverage

_EN = {
    "only": "The sources describe {x} for {y} only, not for {z}.",
    "only_bare": "The sources describe {y} only, not {z}.",
    "unknown": "The sources mention {x}, but not for {z}.",
    "unknown_bare": "The sources mention {x}, but nothing in them applies to the question.",
    "missing": "Nothing in the sources covers {x}.",
}
_ZH = {
    "only": "资料只描述了{y}的{x}，没有涉及{z}。",
    "only_bare": "资料只涉及{y}，没有涉及{z}。",
    "unknown": "资料提到了{x}，但没有说明{z}的情况。",
    "unknown_bare": "资料提到了{x}，但没有适用于这个问题的内容。",
    "missing": "资料中没有关于{x}的内容。",
}


def join(values: Sequence[str], chinese: bool = False, word: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c`` (``a、b`` in Chinese)."""
    items = list(dict.fromkeys(values))
    if chinese:
        return "、".join(items)
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} {word} {items[-1]}"


def _described(cs: Sequence[Constraint], chinese: bool, word: str = "and") -> str:
    return join([c.describe() for c in cs], chinese, word)


def _by_conflicts(
    cov: Sequence[Coverage], judged: Sequence[Judgement], t: dict[str, str], zh: bool
) -> tuple[list[str], set[tuple[str, str]]]:
    """Sentences from the values conflicting items name, and the constraints they explain."""
    open_ = [e.constraint for e in cov if e.status != "covered"]
    asked = [e.constraint for e in cov]
    sentences, explained = [], set()
    conflicting = [j for j in judged if j.verdict == "conflicts"]
    for group in dict.fromkeys(g for j in conflicting for g in j.others):
        js = [j for j in conflicting if group in j.others]
        z = [c for c in asked if c.group == group]
        x = [c for c in open_ if c.group != group and any(c.key in j.matched for j in js)]
        if not x and not any(c in open_ for c in z):
            continue
        named = [c for c in asked if c.group != group and any(c.key in j.matched for j in js)]
        x = (
            [c for c in x if c.kind not in OBJECT_LIKE]
            or x
            or [c for c in named if c.kind == "model"]
        )
        y = join([v for j in js for v in j.others[group]], zh)
        key = "only" if x else "only_bare"
        sentences.append(t[key].format(x=_described(x, zh), y=y, z=_described(z, zh, "or")))
        explained |= {c.key for c in (*named, *z)}
    return sentences, explained


def missing_note(cov: Sequence[Coverage], judged: Sequence[Judgement], chinese: bool) -> str:
    """What the context does not cover, in one or a few sentences ("" when it covers it all)."""
    if all(e.constraint.kind == "object" or e.status == "covered" for e in cov):
        return ""
    t = _ZH if chinese else _EN
    sentences, explained = _by_conflicts(cov, judged, t, chinese)
    asked = [e.constraint for e in cov]
    for e in cov:
        c = e.constraint
        if e.status == "covered" or c.key in explained or c.kind == "object":
            continue
        if e.unknown:
            others = [
                d for d in asked if d.group != c.group and (d.selecting or d.kind in OBJECT_LIKE)
            ]
            key = "unknown" if others else "unknown_bare"
            sentences.append(t[key].format(x=c.describe(), z=_described(others, chinese)))
        else:
            sentences.append(t["missing"].format(x=c.describe()))
    return ("" if chinese else " ").join(sentences)
