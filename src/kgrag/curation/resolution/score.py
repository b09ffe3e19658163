"""Score a candidate pair by evidence, not by its names alone.

The names give a starting point (equal keys strongest, containment and
acronyms weaker); the graph then adds or takes away: shared types,
similar descriptions, shared neighbours and source chunks for; a type
conflict, a sentence naming both as two things, a woman's title against
a man's name against. Some differences are *hard negatives* that no
evidence outweighs (:func:`veto`): a person against a non-person, Mr.
against Mrs., different given names under one surname, and numbered or
qualified variants (Past/Present, FW-A/FW-B, v1/v2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kgrag.curation.resolution.names import Name, spelling_only
from kgrag.curation.resolution.statements import Together
from kgrag.curation.resolution.vetoes import PERSON, types_of, veto
from kgrag.curation.resolution.view import Entity

SPELLING = 0.9
BASE = {"statement": 0.75, "key": 0.75, "acronym": 0.45, "containment": 0.45, "vector": 0.25}
SHORT_ACRONYM = 0.3  # two letters (EB, BA, UN) spell out too many names
_WORD = re.compile(r"[^\W\d_]{4,}|[\u4e00-\u9fff]", re.UNICODE)


@dataclass(slots=True)
class PairScore:
    """One scored pair: its score, what spoke for and against, a hard-negative reason."""

    a: str
    b: str
    score: float
    routes: list[str]
    evidence_for: list[str] = field(default_factory=list)
    evidence_against: list[str] = field(default_factory=list)
    veto: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "a": self.a,
            "b": self.b,
            "score": round(self.score, 3),
            "routes": self.routes,
            "for": self.evidence_for,
            "against": self.evidence_against,
            "veto": self.veto,
        }


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def _overlap(x: frozenset[str] | set[str], y: frozenset[str] | set[str]) -> float:
    return len(x & y) / len(x | y) if x and y else 0.0


def _graph_evidence(a: Entity, b: Entity, s: PairScore) -> float:
    """Types, descriptions, neighbours and sources: what the graph adds (or takes)."""
    gain = 0.0
    ta, tb = types_of(a), types_of(b)
    if ta & tb:
        gain += 0.1
        s.evidence_for.append(f"same type ({', '.join(sorted(a.types & b.types) or ta & tb)})")
    elif ta and tb:
        gain -= 0.25
        s.evidence_against.append(f"different types: {a.type} vs {b.type}")
    desc = _overlap(_words(a.description) - _words(a.name), _words(b.description) - _words(b.name))
    if desc > 0.05:
        gain += 0.2 * min(1.0, desc * 3)
        s.evidence_for.append(f"similar descriptions ({desc:.2f})")
    hood = _overlap(a.neighbours - {b.name}, b.neighbours - {a.name})
    if hood > 0:
        gain += 0.25 * min(1.0, hood * 2)
        s.evidence_for.append(f"shared neighbours ({len(a.neighbours & b.neighbours)})")
    shared = len(a.sources & b.sources)
    if shared:
        cover = shared / min(len(a.sources), len(b.sources))
        gain += 0.2 * cover
        s.evidence_for.append(f"shared source chunks ({shared}, {cover:.0%} of the rarer name's)")
    return gain


def _title_evidence(na: Name, nb: Name, s: PairScore) -> float:
    """A woman's title on one side only: the wife, not the man (Mrs. Cratchit, Bob Cratchit)."""
    for x, y in ((na, nb), (nb, na)):
        if x.gender == "f" and y.gender != "f":
            s.evidence_against.append("a woman's title on one name only")
            return -0.3
    return 0.0


def _text_evidence(seen: Together | None, s: PairScore, stated: bool) -> float:
    """A stated alias for; two names in one sentence against (less so once an alias is stated:
    people speak of themselves by their own name)."""
    if seen is None:
        return 0.0
    if seen.alias:
        s.evidence_for.append(f"stated as an alias: {seen.alias[:160]}")
        return 0.3
    if seen.apart:
        s.evidence_against.append(f"in one sentence as two things: {seen.apart[:160]}")
        return -0.2 if stated else -0.5
    return 0.0


def _base(route: str, na: Name, nb: Name) -> float:
    if route == "acronym" and min(len(na.key), len(nb.key)) <= 2:
        return SHORT_ACRONYM
    return BASE.get(route, 0.0)


def _common_veto(
    na: Name, nb: Name, routes: set[str], seen: Together | None, people: bool
) -> str | None:
    """A one-word name the text uses as a common noun ("the Pact") is not a surname of
    the longer name that contains it ("Warsaw Pact")."""
    if seen is None or not seen.common or routes != {"containment"} or people:
        return None
    if min(len(na.tokens), len(nb.tokens)) != 1 or na.cjk:
        return None
    return f"the shorter name is used as a common noun: {seen.common.strip()[:160]}"


def score_pair(
    a: Entity,
    b: Entity,
    na: Name,
    nb: Name,
    routes: set[str],
    seen: Together | None = None,
    rivals: int = 0,
) -> PairScore:
    """Score ``a`` and ``b``; ``rivals``: other names the shorter one is also contained in
    or spells out (no matter once the text states the alias)."""
    s = PairScore(a.name, b.name, 0.0, sorted(routes))
    base = max(_base(r, na, nb) for r in routes)
    if "key" in routes and spelling_only(na, nb):
        base = SPELLING
        s.evidence_for.append("the same name but for case, spacing, punctuation or script")
    s.evidence_for.append("names: " + ", ".join(s.routes))
    stated = "statement" in routes or bool(seen and seen.alias)
    person = PERSON in types_of(a) | types_of(b)
    s.veto = veto(a, b, na, nb, stated) or _common_veto(na, nb, routes, seen, person)
    if s.veto:
        s.evidence_against.append(s.veto)
    gain = _graph_evidence(a, b, s) + _title_evidence(na, nb, s) + _text_evidence(seen, s, stated)
    if rivals and "key" not in routes and not (seen and seen.alias):
        gain -= min(0.45, 0.15 * rivals)
        s.evidence_against.append(f"the shorter name fits {rivals + 1} longer ones")
    s.score = max(0.0, min(1.0, base + gain)) if not s.veto else 0.0
    return s
