"""Pure merge of extracted fragments into graph nodes and edges.

No storage I/O and no LLM here: each function takes what is stored (or
``None``) and the new fragments and returns a :class:`MergePlan` holding
the merged node/edge dict (fields per ``docs/data-model.md``) and, when the
description must be condensed, the fragments to summarise
(``needs_summary``). Until :func:`kgrag.knowledge.summary.apply_summaries`
replaces it, a plan's description is its fragments joined with ``SEP``.

Everything is deterministic; merging fragments in two batches gives the
same type counts, weights, keywords and source ids as merging them in one
(as long as no cap is reached).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from kgrag.knowledge import fields as f
from kgrag.knowledge.policy import MergePolicy
from kgrag.storage.base import edge_key
from kgrag.types import SEP, ExtractedEntity, ExtractedRelation, Extraction

Key = str | tuple[str, str]


@dataclass(slots=True)
class MergePlan:
    """The result of merging one node or edge, ready to upsert.

    ``data`` is the dict to store; ``fragments`` the deduplicated
    description fragments; ``needs_summary`` the fragments to summarise
    (``None`` when ``data["description"]`` is final); ``changed`` is False
    when ``data`` equals what was stored (nothing to write or re-embed).
    """

    kind: Literal["entity", "relation"]
    key: Key
    data: dict[str, object]
    fragments: list[str] = field(default_factory=list)
    needs_summary: list[str] | None = None
    changed: bool = True

    @property
    def label(self) -> str:
        """The name shown to the summariser."""
        if isinstance(self.key, tuple):
            return f"{self.key[0]} <-> {self.key[1]}"
        return self.key


Stored = Mapping[str, object]  # a stored node or edge (NodeRow / EdgeRow and any other field)


def _text(value: object) -> str | None:
    """A stored text field (None when absent or not text)."""
    return value if isinstance(value, str) else None


def _weight(value: object) -> float:
    """A stored weight (0 when absent)."""
    if not value:
        return 0.0
    return float(value) if isinstance(value, (int, float)) else float(str(value))


def _extras(old: Stored, data: Stored) -> dict[str, object]:
    """Stored fields this module does not manage, kept as they are."""
    return {k: v for k, v in old.items() if k not in data}


def _describe(fragments: list[str], policy: MergePolicy) -> tuple[str, list[str] | None]:
    """The provisional description and the fragments to summarise, if any."""
    joined = SEP.join(fragments)
    return joined, (list(fragments) if policy.summary_needed(fragments) else None)


def merge_entity(
    name: str,
    existing: Stored | None,
    fragments: Sequence[ExtractedEntity],
    policy: MergePolicy,
    now: float,
    extractor: str,
) -> MergePlan:
    """Merge entity ``fragments`` (input order) into the stored node ``existing``."""
    old: Stored = existing or {}
    ids, admitted = f.admit_sources(
        f.as_list(old.get("source_ids")), fragments, policy.max_source_ids_per_entity, policy.keep
    )
    counts = f.count_types(f.seed_type_counts(old), (e.type for e in admitted))
    frags = f.description_fragments(
        _text(old.get("description")), (e.description for e in admitted)
    )
    description, needs = _describe(frags, policy)
    data: dict[str, object] = {
        "entity_type": f.majority_type(counts),
        "type_counts": counts,
        "description": description,
        "source_ids": ids,
        "file_paths": f.merge_file_paths(
            f.as_list(old.get("file_paths")), admitted, policy.max_file_paths, policy.keep
        ),
        "extractor": old.get("extractor") or extractor,
        "created_at": old.get("created_at", now),
    }
    data.update(_extras(old, data))
    return MergePlan("entity", name, data, frags, needs, changed=data != existing)


def merge_relation(
    key: tuple[str, str],
    existing: Stored | None,
    fragments: Sequence[ExtractedRelation],
    policy: MergePolicy,
    now: float,
    extractor: str,
) -> MergePlan:
    """Merge relation ``fragments`` (input order) into the stored edge ``existing``.

    ``key`` must be the canonical :func:`~kgrag.storage.base.edge_key` of
    every fragment's endpoints.
    """
    key = edge_key(*key)
    for r in fragments:
        if edge_key(r.source, r.target) != key:
            raise ValueError(f"relation {r.source!r} -> {r.target!r} does not belong to edge {key}")
    old: Stored = existing or {}
    ids, admitted = f.admit_sources(
        f.as_list(old.get("source_ids")), fragments, policy.max_source_ids_per_relation, policy.keep
    )
    weight = _weight(old.get("weight"))
    for r in admitted:  # a left fold, so batch splits give identical floats
        weight += float(r.weight)
    frags = f.description_fragments(
        _text(old.get("description")), (r.description for r in admitted)
    )
    description, needs = _describe(frags, policy)
    data: dict[str, object] = {
        "src": key[0],
        "tgt": key[1],
        "weight": weight,
        "keywords": f.merge_keywords(
            [str(old.get("keywords") or ""), *(r.keywords for r in admitted)]
        ),
        "description": description,
        "directions": f.merge_directions(
            old.get("directions"), ((r.source, r.target) for r in admitted)
        ),
        "source_ids": ids,
        "file_paths": f.merge_file_paths(
            f.as_list(old.get("file_paths")), admitted, policy.max_file_paths, policy.keep
        ),
        "extractor": old.get("extractor") or extractor,
        "created_at": old.get("created_at", now),
    }
    data.update(_extras(old, data))
    return MergePlan("relation", key, data, frags, needs, changed=data != existing)


def placeholder_entity(
    name: str,
    relation_fragments: Sequence[ExtractedRelation],
    policy: MergePolicy,
    now: float,
    extractor: str,
) -> MergePlan:
    """A node for a relation endpoint that no extraction and no stored node names.

    Its type is ``UNKNOWN``, its description comes from the relations'
    descriptions and its sources from theirs. A later real extraction of
    the entity outvotes the ``UNKNOWN`` type.
    """
    as_entities = [
        ExtractedEntity(
            name=name,
            type=f.UNKNOWN,
            description=r.description,
            chunk_id=r.chunk_id,
            file_path=r.file_path,
        )
        for r in relation_fragments
    ]
    return merge_entity(name, None, as_entities, policy, now, extractor)


def group_extractions(
    extractions: Sequence[Extraction],
) -> tuple[dict[str, list[ExtractedEntity]], dict[tuple[str, str], list[ExtractedRelation]]]:
    """Group fragments by entity name and by canonical edge key.

    Keys and fragment lists follow input (chunk) order. Empty names and
    self-loops are dropped.
    """
    entities: dict[str, list[ExtractedEntity]] = {}
    relations: dict[tuple[str, str], list[ExtractedRelation]] = {}
    for ex in extractions:
        for e in ex.entities:
            if e.name:
                entities.setdefault(e.name, []).append(e)
        for r in ex.relations:
            if r.source and r.target and r.source != r.target:
                relations.setdefault(edge_key(r.source, r.target), []).append(r)
    return entities, relations
