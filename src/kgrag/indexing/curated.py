"""Plan touched graph keys through the curation records.

The planner (:func:`kgrag.knowledge.canonical.plan_keys`) recomputes a key from
its supporting chunks. With curation records, before it runs:

- a split name's rows in the chunks its split lists are read as the new
  name (:data:`~kgrag.knowledge.curation.SPLITS`, a per-(name, chunk) map);
- every raw name (an extracted entity or relation endpoint) is mapped to
  its canonical name, so an alias's fragments land on its target, a
  relation between two names of one group becomes a dropped self-loop and
  parallel edges collapse into one key;
- a canonical key's support is the union of its raw members' support
  (``graph_support`` stays keyed by raw names, so a merge rewrites none);
- manual creations join as the fragments of one more source, :data:`MANUAL`
  (first in canonical order);

and after it: tombstoned keys (and edges touching a tombstoned node) are
dead, and field overrides replace the computed fields. Without records all
of this is the identity, at the cost of one meta read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kgrag.indexing.facts import FactsCache, StoredChunk
from kgrag.knowledge.canonical import ChunkFacts, KeyPlans, plan_keys
from kgrag.knowledge.curation import MANUAL, Curation
from kgrag.knowledge.merge import MergePlan
from kgrag.storage.base import edge_key
from kgrag.storage.layout import FACTS, SUPPORT, support_key
from kgrag.storage.layout.rows import SupportRow
from kgrag.storage.layout.typed import TypedKV
from kgrag.types import ExtractedEntity, ExtractedRelation

if TYPE_CHECKING:
    from kgrag.knowledge.policy import MergePolicy
    from kgrag.storage.base import Storage

Pair = tuple[str, str]
Key = str | Pair
MANUAL_SORT = ("", 0)  # manual facts come first in canonical order


@dataclass(slots=True)
class Planned:
    """The plans of the canonical keys, and what the graph held for them."""

    plans: KeyPlans
    names: list[str]  # canonical names planned
    pairs: list[Pair]  # canonical pairs planned
    old_nodes: dict[str, dict[str, Any]]
    old_edges: dict[Pair, dict[str, Any]]


class CuratedPlanner:
    """Recomputes canonical keys of one storage (see the module docstring)."""

    def __init__(self, storage: Storage, cache: FactsCache, policy: MergePolicy, kind: str):
        self.storage, self.cache, self.policy, self.kind = storage, cache, policy, kind

    async def plan(
        self,
        names: Iterable[str],
        pairs: Iterable[Pair],
        cur: Curation,
        known: Mapping[Key, list[str]],
        facts: Mapping[str, ChunkFacts],
        now: float,
    ) -> Planned:
        """Plans for the canonical keys of raw ``names`` and ``pairs``.

        ``known``: raw keys' support already read (or changed by the caller);
        ``facts``: chunk facts already read. Stale keys (names that are aliases
        now, pairs that became self-loops or another key) that the graph holds
        are added to the dead lists.
        """
        raw_names, raw_pairs = set(names), set(pairs)
        names_c = sorted({c for n in raw_names for c in cur.canon_names(n)})
        pairs_c = sorted({c for p in raw_pairs for c in cur.canon_pairs(p)})
        support = await self._support(names_c, pairs_c, cur, known)
        all_facts = await self._facts(support, facts)
        if cur.aliases or cur.splits:
            all_facts = {c: cur.rename(f) for c, f in all_facts.items()}
        self._add_manual(names_c, pairs_c, cur, support, all_facts)
        g = self.storage.graph
        old_nodes, old_edges = await g.get_nodes(names_c), await g.get_edges(pairs_c)
        plans = plan_keys(
            names_c, pairs_c, support, all_facts, old_nodes, old_edges, self.policy, now
        )
        finalize(plans, cur, old_nodes, old_edges)
        stale_n = sorted(n for n in raw_names if cur.canon(n) != n)
        stale_e = sorted(p for p in raw_pairs if cur.canon_pair(p) != p)
        plans.dead_nodes += sorted((await g.get_nodes(stale_n)).keys())
        plans.dead_edges += sorted((await g.get_edges(stale_e)).keys())
        return Planned(plans, names_c, pairs_c, old_nodes, old_edges)

    async def around(
        self, seeds: Iterable[str], cur: Curation, known: dict[Key, list[str]]
    ) -> tuple[set[str], set[Pair]]:
        """Raw names and pairs to recompute when the records about ``seeds`` change.

        The seeds, their canonical names and every member of those groups;
        the relations their supporting chunks state; the manual relations
        touching them; and the edges the graph holds on any of those names.
        Reads the support it needs into ``known``.
        """
        names = set(seeds)
        for name in list(names):
            names.update(m for c in cur.canon_names(name) for m in cur.support_members(c))
        await self._read_support(names, known)
        chunks = sorted({c for n in names for c in known.get(n, ())})
        pairs: set[Pair] = set()
        for chunk in (await self._facts({}, {}, chunks)).values():
            pairs.update(p for p in chunk.edge_keys() if p[0] in names or p[1] in names)
        for key, _ in cur.created():
            if isinstance(key, tuple) and (key[0] in names or key[1] in names):
                pairs.add(key)
        for edges in (await self.storage.graph.node_edges(sorted(names))).values():
            pairs.update(edges)
        return names, pairs

    async def _read_support(self, keys: Iterable[Key], known: dict[Key, list[str]]) -> None:
        need = sorted((k for k in set(keys) if k not in known), key=support_key)
        support = TypedKV(self.storage.kv(SUPPORT), SupportRow)
        rows = await support.get_many([support_key(k) for k in need])
        for key, row in zip(need, rows, strict=False):
            known[key] = row.get("chunks", []) if row else []

    async def _support(
        self, names: list[str], pairs: list[Pair], cur: Curation, known: Mapping[Key, list[str]]
    ) -> dict[Key, list[str]]:
        """Each canonical key's support: the union of its raw members' support."""
        groups: dict[Key, list[Key]] = {n: list(cur.support_members(n)) for n in names}
        groups.update({p: list(cur.support_pairs(p)) for p in pairs})
        have = dict(known)
        await self._read_support([m for ms in groups.values() for m in ms], have)
        if not cur.splits:
            return {
                key: sorted({c for m in members for c in have.get(m, ())})
                for key, members in groups.items()
            }
        return {  # a split name's chunks count only for the key they resolve to
            key: sorted({c for m in members for c in have.get(m, ()) if cur.canon_key(m, c) == key})
            for key, members in groups.items()
        }

    async def _facts(
        self,
        support: Mapping[Key, Sequence[str]],
        facts: Mapping[str, ChunkFacts],
        extra: Sequence[str] = (),
    ) -> dict[str, ChunkFacts]:
        """Facts of every supporting chunk (those not given are read; unowned ones left out)."""
        wanted = {c for cs in support.values() for c in cs} | set(extra)
        out = {c: facts[c] for c in wanted if c in facts}
        others = sorted(wanted - out.keys())
        for cid, rec in zip(others, await self.storage.kv(FACTS).get_many(others), strict=False):
            if rec is not None and rec.get("owners"):
                out[cid] = self.cache.facts(StoredChunk.from_record(cid, rec))
        return out

    def _add_manual(
        self,
        names: list[str],
        pairs: list[Pair],
        cur: Curation,
        support: dict[Key, list[str]],
        facts: dict[str, ChunkFacts],
    ) -> None:
        """The manual facts of the planned keys, as one more supporting source."""
        chunk = manual_facts(cur, set(names), set(pairs), self.kind)
        if chunk is None:
            return
        facts[MANUAL] = chunk
        for key in [*chunk.entity_names(), *chunk.edge_keys()]:
            if key in support:
                support[key] = [MANUAL, *support[key]]


def manual_facts(cur: Curation, names: set[str], pairs: set[Pair], kind: str) -> ChunkFacts | None:
    """The manual creations touching canonical ``names`` / ``pairs``, canonicalised."""
    entities: list[ExtractedEntity] = []
    relations: list[ExtractedRelation] = []
    for key, made in cur.created():
        if isinstance(key, str):
            if cur.canon(key) in names:
                entities.append(
                    ExtractedEntity(
                        key,
                        made.get("entity_type", ""),
                        made.get("description", ""),
                        MANUAL,
                        MANUAL,
                    )
                )
            continue
        src, tgt = made.get("src", key[0]), made.get("tgt", key[1])
        canon = cur.canon_pair(key)
        if canon is not None and (canon in pairs or canon[0] in names or canon[1] in names):
            relations.append(
                ExtractedRelation(
                    src,
                    tgt,
                    made.get("keywords", ""),
                    made.get("description", ""),
                    float(made.get("weight", 1.0)),
                    MANUAL,
                    MANUAL,
                )
            )
    if not entities and not relations:
        return None
    chunk = ChunkFacts(MANUAL, MANUAL_SORT, [MANUAL], kind, entities, relations)
    return chunk.renamed(cur.canon_map)


def finalize(
    plans: KeyPlans,
    cur: Curation,
    old_nodes: Mapping[str, Mapping[str, object]],
    old_edges: Mapping[Pair, Mapping[str, object]],
) -> None:
    """Aliases, tombstones and field overrides, applied to computed plans (before any summary).

    A merged target lists its aliases (field ``aliases``), so its vector
    embeds their names too (:func:`kgrag.indexing.vectors.entity_text`).
    """
    nodes, edges = plans.plan.nodes, plans.plan.edges
    for name, plan in nodes.items():
        merged = cur.members(name)[1:]
        if merged:
            plan.data["aliases"] = merged
    if not cur.edits:
        return
    for name in [n for n in nodes if cur.deleted(n)]:
        del nodes[name]
        plans.dead_nodes.append(name)
    for pair in [p for p in edges if cur.deleted(p) or cur.deleted(p[0]) or cur.deleted(p[1])]:
        del edges[pair]
        plans.dead_edges.append(pair)
    plans.dead_edges[:] = sorted(set(plans.dead_edges))
    for name, plan in nodes.items():
        _override(plan, cur.overrides(name), old_nodes.get(name))
    for pair, plan in edges.items():
        _override(plan, cur.overrides(pair), old_edges.get(pair))


def _override(
    plan: MergePlan, fields: Mapping[str, object], existing: Mapping[str, object] | None
) -> None:
    if not fields:
        return
    for name, value in fields.items():  # a weight is written as a number (curation.ops)
        plan.data[name] = (
            float(value) if name == "weight" and isinstance(value, int | float) else value
        )
    if "description" in fields:
        plan.needs_summary = None
        plan.data.pop("fragments_digest", None)
    plan.changed = plan.data != existing


def tombstoned_edge(cur: Curation, pair: Pair) -> bool:
    """Whether canonical edge ``pair`` is hidden by a tombstone (its own or an endpoint's)."""
    return cur.deleted(edge_key(*pair)) or cur.deleted(pair[0]) or cur.deleted(pair[1])
