"""Constraints of a question without a language model.

Qualifiers come from :func:`kgrag.query.conditions.scan.scan` over the
question (places included). Objects come from the keyword stage: each
low-level keyword that is not itself a qualifier ("FW-A" is a model
number, "TLS" a protocol) and each retrieved entity whose name the
question writes out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from kgrag.query.conditions.constraint import Constraint
from kgrag.query.conditions.names import in_question
from kgrag.query.conditions.scan import scan


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


def unique(constraints: Iterable[Constraint]) -> list[Constraint]:
    """The first constraint of each (kind, value); an object the qualifiers already name goes."""
    seen: dict[tuple[str, str], Constraint] = {}
    for c in constraints:
        seen.setdefault(c.key, c)
    named = {c.value.casefold() for c in seen.values() if c.kind != "object"}
    return [c for c in seen.values() if c.kind != "object" or c.norm not in named]


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
