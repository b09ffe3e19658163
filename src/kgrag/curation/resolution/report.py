"""What ``kgrag dedupe`` found: groups with their evidence, near misses, homonyms.

The same report serves ``--dry-run`` (read it, then ``--apply``) and
``--apply`` (its ``merges`` name the merge ids ``kgrag unmerge`` takes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from kgrag.curation.resolution.group import Group
from kgrag.curation.resolution.score import PairScore


class Cluster(TypedDict):
    """The chunks where a name has one type, and its relation partners there."""

    type: str
    chunks: list[str]
    neighbours: list[str]  # the first 20, sorted


@dataclass(slots=True)
class Homonym:
    """One name whose fragments fall into clearly separate clusters."""

    name: str
    clusters: list[Cluster]

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "clusters": self.clusters}


@dataclass(slots=True)
class ResolutionReport:
    min_score: float
    groups: list[Group] = field(default_factory=list)
    near_misses: list[PairScore] = field(default_factory=list)  # best rejected pairs
    homonyms: list[Homonym] = field(default_factory=list)
    stats: dict[str, float] = field(default_factory=dict)
    merges: list[str] = field(default_factory=list)  # merge ids, once applied

    def to_dict(self) -> dict[str, object]:
        return {
            "min_score": self.min_score,
            "stats": self.stats,
            "groups": [g.to_dict() for g in self.groups],
            "near_misses": [p.to_dict() for p in self.near_misses],
            "homonyms": [h.to_dict() for h in self.homonyms],
            "merges": self.merges,
        }

    def to_text(self) -> str:
        lines = [
            f"{len(self.groups)} groups at score >= {self.min_score:g} "
            f"({int(self.stats.get('entities', 0))} entities, "
            f"{int(self.stats.get('candidates', 0))} candidate pairs, "
            f"{self.stats.get('seconds', 0.0):.2f} s)"
        ]
        for g in self.groups:
            lines.append(f"\n{g.target}  <=  {', '.join(g.members)}   [score {g.score:.2f}]")
            lines += [_link(p) for p in g.links]
        if self.near_misses:
            lines.append("\nKept apart (best rejected pairs):")
            lines += [_link(p) for p in self.near_misses]
        if self.homonyms:
            lines.append("\nPossible homonyms (one name, separate clusters):")
            for h in self.homonyms:
                kinds = "; ".join(f"{c['type']} x{len(c['chunks'])}" for c in h.clusters)
                lines.append(f"  {h.name}: {kinds}")
        if self.merges:
            lines.append("\nMerged: " + ", ".join(self.merges) + "  (undo: kgrag unmerge ID)")
        return "\n".join(lines)


def _link(p: PairScore) -> str:
    out = f"  {p.a} ~ {p.b}  {p.score:.2f}"
    if p.evidence_for:
        out += "\n    + " + "; ".join(p.evidence_for)
    if p.evidence_against:
        out += "\n    - " + "; ".join(p.evidence_against)
    return out
