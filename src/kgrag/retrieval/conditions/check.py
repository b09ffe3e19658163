"""Judging one context item against the question's constraints.

An item's text (an entity's name and description, a relation's endpoints,
keywords and description, a chunk's content) is scanned for qualifiers
and compared with each constraint:

- **conflicts**: for some exclusive group (model numbers of one family,
  versions, dates and years, the versions of one protocol) the item names
  values of the group and none of the asked ones: "FW-B" for a question
  about "FW-A", "v1" for one about "v2";
- **applies**: no conflict, the item names one of the question's objects
  (when it has any), and it matches every selecting group (model, version,
  time) the question has: a statement without a version does not apply to
  a question about version 2;
- **unknown**: anything else.

What an applying item *covers* is read statement by statement (its
sentences and merged description parts): a constraint counts only where a
statement names it without conflicting, so an entity whose description
merges "v1 supports TLS" and "v2 adds a console" applies to a question
about TLS on v2 but does not cover TLS.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from kgrag.retrieval.conditions.constraint import OBJECT_LIKE, Constraint, Mention, compatible, show
from kgrag.retrieval.conditions.names import names
from kgrag.retrieval.conditions.scan import scan
from kgrag.retrieval.shapes import JudgementData

Verdict = Literal["applies", "conflicts", "unknown"]


@dataclass(slots=True)
class Judgement:
    """The verdict on one item; ``matched`` holds the keys of the constraints it names."""

    kind: str  # entity, relation or chunk
    id: str
    verdict: Verdict
    reasons: list[str] = field(default_factory=list)
    matched: frozenset[tuple[str, str]] = frozenset()
    covers: frozenset[tuple[str, str]] = frozenset()  # named by non-conflicting statements
    # group -> the values the item names instead of the asked ones (conflicts only)
    others: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> JudgementData:
        return {"kind": self.kind, "id": self.id, "verdict": self.verdict, "reasons": self.reasons}


def _matches(c: Constraint, text: str, mentions: Sequence[Mention]) -> bool:
    if c.kind in ("object", "place"):
        return names(text, c.value)
    return any(m.group == c.group and compatible(c.kind, c.norm, m.norm) for m in mentions)


def mention_text(m: Mention, label: str = "") -> str:
    """How an item's value is named in reasons and notes (``firmware v1``, ``FW-B``)."""
    if m.kind in ("version", "protocol", "date", "year"):
        return show(m.kind, m.norm, m.label or label)
    return m.text


def _conflicts(
    asked: Sequence[Constraint], mentions: Sequence[Mention], matched: set[tuple[str, str]]
) -> dict[str, tuple[list[Constraint], list[str]]]:
    """group -> (asked constraints of it, values named instead) for every conflicting group."""
    out: dict[str, tuple[list[Constraint], list[str]]] = {}
    for group in dict.fromkeys(c.group for c in asked if c.exclusive):
        wanted = [c for c in asked if c.group == group and c.exclusive]
        if any(c.key in matched for c in wanted):
            continue
        seen = [m for m in mentions if m.group == group]
        if seen:
            values = list(dict.fromkeys(mention_text(m, wanted[0].label) for m in seen))
            out[group] = (wanted, values)
    return out


def _unmet(
    asked: Sequence[Constraint], mentions: Sequence[Mention], matched: set[tuple[str, str]]
) -> list[str]:
    """Why an item without conflicts does not apply (empty when it does)."""
    reasons = []
    objects = [c for c in asked if c.kind in OBJECT_LIKE]
    if objects and not any(c.key in matched for c in objects):
        reasons.append("names none of " + ", ".join(c.describe() for c in objects))
    for group in dict.fromkeys(c.group for c in asked if c.selecting):
        wanted = [c for c in asked if c.group == group and c.selecting]
        if reasons and all(c.kind in OBJECT_LIKE for c in wanted):
            continue  # said already: "names none of FW-A"
        if any(c.key in matched for c in wanted):
            continue
        asked_text = " or ".join(c.describe() for c in wanted)
        seen = list(dict.fromkeys(mention_text(m) for m in mentions if m.group == group))
        reasons.append(
            f"names {', '.join(seen)}, not {asked_text}"
            if seen
            else f"says nothing of {asked_text}"
        )
    return reasons


def judge(asked: Sequence[Constraint], kind: str, item_id: str, text: str) -> Judgement:
    """The verdict on the item ``item_id`` of ``kind`` whose text is ``text``."""
    mentions = scan(text, kinds={c.kind for c in asked})
    matched = {c.key for c in asked if _matches(c, text, mentions)}
    conflicts = _conflicts(asked, mentions, matched)
    if conflicts:
        reasons = [
            f"names {', '.join(values)}, not {' or '.join(c.describe() for c in wanted)}"
            for wanted, values in conflicts.values()
        ]
        others = {group: values for group, (_, values) in conflicts.items()}
        return Judgement(kind, item_id, "conflicts", reasons, frozenset(matched), others=others)
    unmet = _unmet(asked, mentions, matched)
    if unmet:
        return Judgement(kind, item_id, "unknown", unmet, frozenset(matched))
    covers = _covered(asked, text) if any(c.exclusive for c in asked) else matched
    return Judgement(kind, item_id, "applies", [], frozenset(matched), frozenset(covers))


_STATEMENT_END = re.compile(r"[.!?;]\s+|[。！？；]\s*|\n+")  # the end marks go with it


def _covered(asked: Sequence[Constraint], text: str) -> set[tuple[str, str]]:
    """The constraints that statements of ``text`` name without conflicting."""
    out: set[tuple[str, str]] = set()
    kinds = {c.kind for c in asked}
    for statement in _STATEMENT_END.split(text):
        mentions = scan(statement, kinds=kinds)
        matched = {c.key for c in asked if _matches(c, statement, mentions)}
        if matched and not _conflicts(asked, mentions, matched):
            out |= matched
    return out
