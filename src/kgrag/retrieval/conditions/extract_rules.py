"""Constraints of a question without a language model.

Qualifiers come from :func:`kgrag.retrieval.conditions.scan.scan` over the
question (places included). Objects come from the keyword stage: each
low-level keyword that is not itself a qualifier ("FW-A" is a model
number, "TLS" a protocol) and each retrieved entity whose name the
question writes out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from kgrag.retrieval.conditions.constraint import Constraint, compatible
from kgrag.retrieval.conditions.names import in_question
from kgrag.retrieval.conditions.scan import scan


def _span(question: str, text: str) -> tuple[int, int] | None:
    at = question.casefold().find(text.casefold())
    return (at, at + len(text)) if at >= 0 else None


def _object(question: str, name: str) -> Constraint:
    name = " ".join(name.split())
    return Constraint("object", name, name.casefold(), _span(question, name))


def from_names(question: str, names: Iterable[str]) -> list[Constraint]:
    """Objects (or, for "FW-A" or "TLS", qualifiers) for names the keyword stage gave."""
    out = []
    for name in names:
        found = scan(name)
        if found:
            out += [replace(Constraint.of(m), span=_span(question, m.text)) for m in found]
        elif len(name.strip()) >= 2:
            out.append(_object(question, name))
    return out


def _subsumed(c: Constraint, kept: Iterable[Constraint]) -> bool:
    """Whether a kept qualifier already says ``c`` ("TLS" beside "TLS 1.3", "v2" beside "v2")."""
    return any(
        d.group == c.group and d.kind == c.kind and compatible(d.kind, d.norm, c.norm) for d in kept
    )


def unique(constraints: Iterable[Constraint]) -> list[Constraint]:
    """The first of the constraints that say the same; an object a qualifier names goes."""
    kept: list[Constraint] = []
    for c in constraints:
        if c.kind == "object" and any(d.key == c.key for d in kept):
            continue
        if c.kind != "object" and _subsumed(c, kept):
            continue
        kept.append(c)
    named = {c.value.casefold() for c in kept if c.kind != "object"}
    return tie_times([c for c in kept if c.kind != "object" or c.norm not in named])


def _product(c: Constraint) -> bool:
    """A model number that names a product: not a one-letter code (U-20, F-16, B-52)."""
    return re.fullmatch(r"[A-Z]-\d{1,3}", c.value) is None


def tie_times(constraints: list[Constraint]) -> list[Constraint]:
    """Dates and years made strict (able to make items conflict) beside a model or version.

    A one-letter code such as "U-20" (an age group, an aircraft) does not
    count. In a question with neither, a year often qualifies another part of it
    ("the 2001 film featuring an actress who..."): an item naming another
    year is then unknown, not conflicting.
    """
    tied = any(c.kind == "version" or (c.kind == "model" and _product(c)) for c in constraints)
    return [
        replace(c, strict=tied) if c.kind in ("date", "year") and c.strict != tied else c
        for c in constraints
    ]


def question_qualifiers(question: str) -> list[Constraint]:
    """The qualifiers written in ``question``, with their spans."""
    return [Constraint.of(m) for m in scan(question, with_places=True)]


def rule_constraints(
    question: str, keywords: Sequence[str], entity_names: Iterable[str] = ()
) -> list[Constraint]:
    """Qualifiers of ``question``, then objects from ``keywords`` and the entities it names."""
    matched = [n for n in entity_names if in_question(question, n)]
    return unique(
        [
            *question_qualifiers(question),
            *from_names(question, keywords),
            *from_names(question, matched),
        ]
    )
