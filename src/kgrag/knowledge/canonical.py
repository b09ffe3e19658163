"""The graph as a function of the live chunks: recompute a node or edge from scratch.

Every live chunk carries its extraction (:class:`ChunkFacts`) and its place
in the canonical order: the sort key of the document that owns it (its
source path, or id) and its position there. A node or edge is never
"the stored value plus the newcomer": it is merged from *all* fragments of
the chunks that support it, taken in canonical order, so the result depends
on the set of live documents only, not on the order they arrived in,
retries, supersedes, deletes or concurrent writers.

:func:`plan_keys` does that for a set of touched keys. The description is
the joined fragments, or a summary of them (:func:`summarise_plans`; see
:func:`kgrag.knowledge.summary.summarize_buckets`, which summarises in fixed
buckets so one changed fragment costs about two calls). A writer may give
a plan its joined fragments for now (:func:`provisional`) and summarise
later, once per key however many commits touched it. A stored
description is kept as it is when the fragments it was made from are
unchanged (``fragments_digest``), so touching a key costs no summary call
unless its fragments really changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar

from kgrag.knowledge import fields as f
from kgrag.knowledge.batch import BatchPlan
from kgrag.knowledge.merge import (
    MergePlan,
    Stored,
    merge_entity,
    merge_relation,
    placeholder_entity,
)
from kgrag.knowledge.policy import MergePolicy
from kgrag.knowledge.summary import apply_summaries, truncate_tokens
from kgrag.storage.base import edge_key
from kgrag.types import SEP, ExtractedEntity, ExtractedRelation

if TYPE_CHECKING:
    from kgrag.knowledge.summary import Chat

Pair = tuple[str, str]


@dataclass(slots=True)
class ChunkFacts:
    """One live chunk: its extraction and where it goes in canonical order."""

    chunk_id: str
    sort: tuple[str, int]  # (owning document's sort key, chunk position)
    file_paths: list[str]  # every owning document's file path, sorted
    extractor: str = "llm"
    entities: list[ExtractedEntity] = field(default_factory=list)
    relations: list[ExtractedRelation] = field(default_factory=list)

    @property
    def order(self) -> tuple[str, int, str]:
        return (*self.sort, self.chunk_id)

    def entity_names(self) -> set[str]:
        """Names this chunk supports: its entities and its relations' endpoints."""
        names = {e.name for e in self.entities if e.name}
        for r in self.relations:
            if _valid(r):
                names.update((r.source, r.target))
        return names

    def edge_keys(self) -> set[Pair]:
        return {edge_key(r.source, r.target) for r in self.relations if _valid(r)}

    def renamed(self, names: Mapping[str, str]) -> ChunkFacts:
        """The chunk with every name mapped through ``names`` (aliases to canonical names).

        Itself when no name of it is mapped. A relation whose endpoints map
        to one name becomes a self-loop, which :meth:`edge_keys` skips.
        """
        if not names or not any(n in names for n in self._all_names()):
            return self
        return ChunkFacts(
            self.chunk_id,
            self.sort,
            self.file_paths,
            self.extractor,
            entities=[replace(e, name=names.get(e.name, e.name)) for e in self.entities],
            relations=[
                replace(
                    r, source=names.get(r.source, r.source), target=names.get(r.target, r.target)
                )
                for r in self.relations
            ],
        )

    def _all_names(self) -> Iterable[str]:
        yield from (e.name for e in self.entities)
        for r in self.relations:
            yield r.source
            yield r.target


def _valid(r: ExtractedRelation) -> bool:
    return bool(r.source and r.target and r.source != r.target)


def fragments_digest(fragments: Sequence[str]) -> str:
    """A digest of an ordered fragment list (what a summary was made from)."""
    h = hashlib.sha256()
    for frag in fragments:
        data = frag.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()[:32]


def _canonical(facts: Iterable[ChunkFacts]) -> list[ChunkFacts]:
    return sorted(facts, key=lambda c: c.order)


def _paths_of(
    source_ids: Sequence[str], facts: Mapping[str, ChunkFacts], policy: MergePolicy
) -> list[str]:
    """File paths of the admitted chunks, in canonical order, capped."""
    paths = f.dedup(p for cid in source_ids if cid in facts for p in facts[cid].file_paths)
    return f.cap(paths, policy.max_file_paths, policy.keep)


def _settle(
    plan: MergePlan,
    existing: Stored | None,
    facts: Mapping[str, ChunkFacts],
    policy: MergePolicy,
) -> MergePlan:
    """Canonical file paths, kept creation time, reused summary, ``changed``."""
    old = existing or {}
    plan.data["file_paths"] = _paths_of(f.as_list(plan.data["source_ids"]), facts, policy)
    if "created_at" in old:
        plan.data["created_at"] = old["created_at"]
    if plan.needs_summary is not None:
        digest = fragments_digest(plan.needs_summary)
        if old.get("fragments_digest") == digest and old.get("description"):
            plan.data["description"] = old["description"]
            plan.data["fragments_digest"] = digest
            plan.needs_summary = None
    plan.changed = plan.data != existing
    return plan


async def summarise_plans(
    plans: Sequence[MergePlan], chat: Chat | None, *, policy: MergePolicy, language: str
) -> int:
    """Run the summaries ``plans`` need and record what each was made from."""
    digests = {id(p): fragments_digest(p.needs_summary) for p in plans if p.needs_summary}
    done = await apply_summaries(plans, chat, policy=policy, language=language)
    for plan in plans:
        if id(plan) in digests:
            plan.data["fragments_digest"] = digests[id(plan)]
    return done


def provisional(plans: Sequence[MergePlan], policy: MergePolicy) -> list[MergePlan]:
    """Give plans that need a summary their joined fragments for now; returns them."""
    waiting = [p for p in plans if p.needs_summary]
    for plan in waiting:
        frags = plan.needs_summary or []
        plan.data["description"] = truncate_tokens(
            policy.tokenizer, SEP.join(frags), policy.summary_max_tokens
        )
        plan.data.pop("fragments_digest", None)
        plan.needs_summary = None
    return waiting


K = TypeVar("K", str, Pair)
# plan_entity / plan_relation: (key, supporting chunks, stored data, policy, now)
Planner = Callable[[K, Sequence[ChunkFacts], Stored | None, MergePolicy, float], MergePlan | None]


def plan_entity(
    name: str,
    support: Sequence[ChunkFacts],
    existing: Stored | None,
    policy: MergePolicy,
    now: float,
) -> MergePlan | None:
    """The node ``name`` from its supporting chunks; ``None``: it no longer exists."""
    chunks = _canonical(support)
    extractor = chunks[0].extractor if chunks else "llm"
    rows = [e for c in chunks for e in c.entities if e.name == name]
    if rows:
        plan = merge_entity(name, None, rows, policy, now, extractor)
    else:
        rels = [
            r for c in chunks for r in c.relations if _valid(r) and name in (r.source, r.target)
        ]
        if not rels:
            return None
        plan = placeholder_entity(name, rels, policy, now, extractor)
    return _settle(plan, existing, {c.chunk_id: c for c in chunks}, policy)


def plan_relation(
    key: Pair,
    support: Sequence[ChunkFacts],
    existing: Stored | None,
    policy: MergePolicy,
    now: float,
) -> MergePlan | None:
    """The edge ``key`` from its supporting chunks; ``None``: it no longer exists."""
    chunks = _canonical(support)
    rows = [
        r for c in chunks for r in c.relations if _valid(r) and edge_key(r.source, r.target) == key
    ]
    if not rows:
        return None
    plan = merge_relation(key, None, rows, policy, now, chunks[0].extractor)
    return _settle(plan, existing, {c.chunk_id: c for c in chunks}, policy)


@dataclass(slots=True)
class KeyPlans:
    """What to write for a set of touched keys: plans, and keys to delete."""

    plan: BatchPlan
    dead_nodes: list[str]
    dead_edges: list[Pair]


def plan_keys(
    names: Iterable[str],
    pairs: Iterable[Pair],
    support: Mapping[str | Pair, Sequence[str]],
    facts: Mapping[str, ChunkFacts],
    existing_nodes: Mapping[str, Stored],
    existing_edges: Mapping[Pair, Stored],
    policy: MergePolicy,
    now: float,
) -> KeyPlans:
    """Recompute every touched node and edge from its supporting chunks."""

    def run(
        keys: Iterable[K], plan: Planner[K], existing: Mapping[K, Stored]
    ) -> tuple[dict[K, MergePlan], list[K]]:
        live: dict[K, MergePlan] = {}
        dead: list[K] = []
        for key in sorted(set(keys)):
            chunks = [facts[c] for c in support.get(key, ()) if c in facts]
            made = plan(key, chunks, existing.get(key), policy, now)
            if made is None:
                dead.append(key)
            else:
                live[key] = made
        return live, dead

    nodes, dead_nodes = run(names, plan_entity, existing_nodes)
    edges, dead_edges = run(pairs, plan_relation, existing_edges)
    return KeyPlans(BatchPlan(nodes, edges), dead_nodes, dead_edges)
