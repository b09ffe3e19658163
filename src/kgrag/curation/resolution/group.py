"""Accepted pairs into groups, never across a hard negative.

Pairs join in order of score (best first). Two groups join only if no
member of one is a hard negative of a member of the other
(:func:`kgrag.curation.resolution.score.veto`, checked on every cross pair, not only
the scored ones), so ``Cratchit`` may join ``Bob Cratchit`` but then
``Martha Cratchit`` stays apart. A group's target is its most complete
name, then its best-supported (sources and neighbours); its score its
weakest link.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kgrag.curation.resolution.names import STOPWORDS, parse
from kgrag.curation.resolution.score import PairScore
from kgrag.curation.resolution.vetoes import FORM_WORDS

MAX_GROUP = 25
Vetoed = Callable[[str, str], str | None]
Support = Callable[[str], int]


@dataclass(slots=True)
class Group:
    """Names for one thing: merge ``members`` into ``target``."""

    target: str
    members: list[str]
    score: float
    links: list[PairScore] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [self.target, *self.members]

    def to_dict(self) -> dict[str, object]:
        return {
            "target": self.target,
            "members": self.members,
            "score": round(self.score, 3),
            "links": [p.to_dict() for p in self.links],
        }


class _Components:
    def __init__(self) -> None:
        self.root: dict[str, str] = {}
        self.members: dict[str, list[str]] = {}

    def find(self, x: str) -> str:
        self.root.setdefault(x, x)
        self.members.setdefault(x, [x])
        while self.root[x] != x:
            self.root[x] = self.root[self.root[x]]
            x = self.root[x]
        return x

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if len(self.members[ra]) < len(self.members[rb]):
            ra, rb = rb, ra
        self.root[rb] = ra
        self.members[ra] += self.members.pop(rb)


def _clash(xs: list[str], ys: list[str], vetoed: Vetoed) -> bool:
    return any(vetoed(x, y) for x in xs for y in ys)


def _target(names: Iterable[str], support: Support) -> str:
    """The most complete name (most words of its own: *Ebenezer Scrooge*, not *Scrooge*;
    form words and titles do not count), then the best supported."""
    return max(names, key=lambda n: (_complete(n), support(n), len(n.split()), len(n), n))


def _complete(raw: str) -> int:
    name = parse(raw)
    if name.cjk:  # 诸葛亮 and 孔明: a courtesy name is no less complete; support decides
        return 0
    return sum(t not in STOPWORDS and t not in FORM_WORDS for t in name.tokens)


def group_pairs(accepted: list[PairScore], vetoed: Vetoed, support: Support) -> list[Group]:
    """Connected components of ``accepted`` that join no hard-negative pair."""
    comps = _Components()
    links: list[PairScore] = []
    for p in sorted(accepted, key=lambda p: (-p.score, p.a, p.b)):
        ra, rb = comps.find(p.a), comps.find(p.b)
        if ra == rb:
            continue
        xs, ys = comps.members[ra], comps.members[rb]
        if len(xs) + len(ys) > MAX_GROUP or _clash(xs, ys, vetoed):
            continue
        comps.join(p.a, p.b)
        links.append(p)
    groups: dict[str, Group] = {}
    for p in links:
        root = comps.find(p.a)
        names = comps.members[root]
        if root not in groups:
            target = _target(names, support)
            groups[root] = Group(target, sorted(n for n in names if n != target), 1.0)
        groups[root].links.append(p)
        groups[root].score = min(groups[root].score, p.score)
    return sorted(groups.values(), key=lambda g: (-g.score, g.target))
