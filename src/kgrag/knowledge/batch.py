"""Plan the merge of one batch (typically one document) in a single call.

The caller reads the stored nodes and edges the batch touches, calls
:func:`plan_batch`, runs :func:`kgrag.knowledge.summary.apply_summaries` over
the plans, then upserts ``plan.data`` for every plan whose ``changed`` is
true. See :func:`needed_keys` for what to read first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgrag.knowledge.merge import (
    MergePlan,
    group_extractions,
    merge_entity,
    merge_relation,
    placeholder_entity,
)
from kgrag.knowledge.policy import MergePolicy
from kgrag.types import ExtractedRelation, Extraction


@dataclass(slots=True)
class BatchInput:
    """One batch of extractions and what the graph holds for it.

    ``existing_nodes`` must hold every stored node among
    ``needed_keys(extractions)[0]`` (absent names are new);
    ``existing_edges`` every stored edge among the edge keys (canonical).
    """

    extractions: Sequence[Extraction]
    existing_nodes: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    existing_edges: Mapping[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    now: float = 0.0
    extractor: str = "llm"


@dataclass(slots=True)
class BatchPlan:
    """Node plans (entities then placeholders) and edge plans, in input order."""

    nodes: dict[str, MergePlan]
    edges: dict[tuple[str, str], MergePlan]

    def all(self) -> list[MergePlan]:
        """Every plan, nodes first."""
        return [*self.nodes.values(), *self.edges.values()]


def needed_keys(extractions: Sequence[Extraction]) -> tuple[list[str], list[tuple[str, str]]]:
    """Node names (entities and relation endpoints) and edge keys to read."""
    entities, relations = group_extractions(extractions)
    names = list(entities)
    seen = set(names)
    for a, b in relations:
        for n in (a, b):
            if n not in seen:
                seen.add(n)
                names.append(n)
    return names, list(relations)


def _endpoint_fragments(
    relations: Mapping[tuple[str, str], list[ExtractedRelation]], known: set[str]
) -> dict[str, list[ExtractedRelation]]:
    """Relation fragments per endpoint that is not ``known``, input order."""
    out: dict[str, list[ExtractedRelation]] = {}
    for key, frags in relations.items():
        for n in key:
            if n not in known:
                out.setdefault(n, []).extend(frags)
    return out


def plan_batch(inp: BatchInput, policy: MergePolicy) -> BatchPlan:
    """Merge plans for every node and edge the batch touches.

    Relation endpoints that neither the batch nor the graph knows get a
    :func:`~kgrag.knowledge.merge.placeholder_entity`.
    """
    entities, relations = group_extractions(inp.extractions)
    nodes = {
        name: merge_entity(
            name, inp.existing_nodes.get(name), frags, policy, inp.now, inp.extractor
        )
        for name, frags in entities.items()
    }
    known = set(nodes) | set(inp.existing_nodes)
    for name, frags in _endpoint_fragments(relations, known).items():
        nodes[name] = placeholder_entity(name, frags, policy, inp.now, inp.extractor)
    edges = {
        key: merge_relation(key, inp.existing_edges.get(key), frags, policy, inp.now, inp.extractor)
        for key, frags in relations.items()
    }
    return BatchPlan(nodes, edges)
