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

from kgrag.resolve.names import Name, is_distinguishing, spelling_only
from kgrag.resolve.statements import Together
from kgrag.resolve.view import Entity

PERSON = "person"
SPELLING = 0.9
BASE = {"statement": 0.75, "key": 0.75, "acronym": 0.5, "containment": 0.45, "vector": 0.25}
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


def _types(e: Entity) -> set[str]:
    return {t.casefold() for t in e.types}


def _distinct(name: Name) -> set[str]:
    """Distinguishing tokens; a lone letter counts only at the end (FW-A), not as an initial."""
    toks = name.tokens
    return {
        t for i, t in enumerate(toks) if is_distinguishing(t) and (len(t) > 1 or i == len(toks) - 1)
    }


def _given_names_differ(na: Name, nb: Name) -> bool:
    if na.cjk and nb.cjk:
        a, b = na.key, nb.key
        return 2 <= len(a) <= 3 and 2 <= len(b) <= 3 and a[0] == b[0] and a[1:] != b[1:]
    if len(na.tokens) < 2 or len(nb.tokens) < 2 or na.tokens[-1] != nb.tokens[-1]:
        return False
    fa, fb = na.tokens[0], nb.tokens[0]
    return not (fa.startswith(fb) or fb.startswith(fa))


def veto(a: Entity, b: Entity, na: Name, nb: Name, stated: bool) -> str | None:
    """The hard-negative reason that keeps ``a`` and ``b`` apart whatever else says, if any."""
    ta, tb = _types(a), _types(b)
    if ta and tb and not ta & tb and PERSON in ta | tb and not (stated or spelling_only(na, nb)):
        return f"type conflict: {a.type} vs {b.type}"
    if (na.corporate and PERSON in tb) or (nb.corporate and PERSON in ta):
        return "a person and a company named after them"
    if na.gender and nb.gender and na.gender != nb.gender:
        return "titles of different genders"
    if na.qualifier and nb.qualifier and na.qualifier != nb.qualifier:
        return f"qualified variants: ({na.qualifier}) vs ({nb.qualifier})"
    differ = _distinct(na) ^ _distinct(nb)
    if differ:
        return "numbered or qualified variant: " + ", ".join(sorted(differ))
    if not stated and _given_names_differ(na, nb):
        return "different given names under one surname"
    if PERSON in ta and PERSON in tb and _each_has_its_own(na, nb):
        return "different names beyond a shared word"
    if _woman_and_other(na, nb) or _woman_and_other(nb, na):
        return "a woman's title against a man's or a full name (family members)"
    return None


def _each_has_its_own(na: Name, nb: Name) -> bool:
    """Two people's names, each with a word the other lacks (Tim Cratchit, Tim Smith)."""
    if na.cjk or nb.cjk:
        return False
    a, b = set(na.tokens), set(nb.tokens)
    own_a = {t for t in a - b if not any(len(t) == 1 and u.startswith(t) for u in b - a)}
    own_b = {t for t in b - a if not any(len(t) == 1 and u.startswith(t) for u in a - b)}
    return bool(a & b and own_a and own_b)


def _woman_and_other(x: Name, y: Name) -> bool:
    return (
        x.gender == "f" and y.gender != "f" and (y.gender == "m" or len(y.tokens) > len(x.tokens))
    )


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def _overlap(x: frozenset[str] | set[str], y: frozenset[str] | set[str]) -> float:
    return len(x & y) / len(x | y) if x and y else 0.0


def _graph_evidence(a: Entity, b: Entity, s: PairScore) -> float:
    """Types, descriptions, neighbours and sources: what the graph adds (or takes)."""
    gain = 0.0
    ta, tb = _types(a), _types(b)
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


def score_pair(
    a: Entity,
    b: Entity,
    na: Name,
    nb: Name,
    routes: set[str],
    seen: Together | None = None,
    rivals: int = 0,
) -> PairScore:
    """Score ``a`` and ``b``; ``rivals``: other names the shorter one is also contained in."""
    s = PairScore(a.name, b.name, 0.0, sorted(routes))
    base = max(BASE.get(r, 0.0) for r in routes)
    if "key" in routes and spelling_only(na, nb):
        base = SPELLING
        s.evidence_for.append("the same name but for case, spacing, punctuation or script")
    s.evidence_for.append("names: " + ", ".join(s.routes))
    stated = "statement" in routes or bool(seen and seen.alias)
    s.veto = veto(a, b, na, nb, stated)
    if s.veto:
        s.evidence_against.append(s.veto)
    gain = _graph_evidence(a, b, s) + _title_evidence(na, nb, s) + _text_evidence(seen, s, stated)
    if rivals and "key" not in routes:
        gain -= min(0.45, 0.15 * rivals)
        s.evidence_against.append(f"the shorter name fits {rivals + 1} longer ones")
    s.score = max(0.0, min(1.0, base + gain)) if not s.veto else 0.0
    return s
