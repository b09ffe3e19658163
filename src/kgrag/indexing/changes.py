"""Apply a change to the set of live documents, in one transaction.

Every write the index makes goes through :class:`ChangeApplier`: adding a
document, superseding one (its new version replaces the committed one),
moving or replacing one, and deleting. A :class:`Change` says which
documents get a new committed version (``add``) and which lose theirs
(``remove``). From that the applier works out:

1. the chunks whose owners change (the old and new chunks of those
   documents): a chunk no document owns any more is *dead*;
2. the entity names and relation keys those chunks' extractions touch;
3. each touched key's supporting chunks (``graph_support``), without the
   dead ones and with the newly live ones;
4. every touched node and edge recomputed from its supporting chunks in
   canonical order (:mod:`kgrag.knowledge.canonical`), vectors re-embedded
   only where their text changed;
5. one transaction writing chunks, facts, support, graph, vectors, lexical
   index, contribution records and status.

A key whose fragments need a new LLM summary gets its joined fragments
for now and is listed in ``summary_pending`` (in the same transaction);
:meth:`ChangeApplier.finish`, which every write operation runs before it
returns (and which resumes after a crash), summarises each listed key once,
however many documents of the run touched it.

Curation records (:mod:`kgrag.curation`) are inputs too: every name is
mapped through the entity aliases before planning, manual facts join as
one more source, tombstones and field overrides apply to the plans
(:class:`~kgrag.indexing.curated.CuratedPlanner`). A change with no documents
but ``recompute`` names recomputes the keys around them, planning with the
change's ``curation`` records, which ``commit`` writes in the same
transaction (a merge, an unmerge, a manual edit).

So the graph after any sequence of changes (once finished) is the graph a fresh index of
the live documents (with the same curation records) builds, and a kill at any point leaves the old state or
the new one. Unchanged chunks are never extracted again: their stored
extraction (``chunk_facts``) is reused.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import numpy as np

from kgrag.indexing.curated import CuratedPlanner, Planned
from kgrag.indexing.facts import FactsCache, PendingSummaries, StoredChunk
from kgrag.indexing.vectors import GraphVectors
from kgrag.knowledge.canonical import (
    ChunkFacts,
    KeyPlans,
    provisional,
    summarise_plans,
)
from kgrag.knowledge.curation import Curation, CurationStore
from kgrag.knowledge.merge import MergePlan
from kgrag.knowledge.policy import MergePolicy
from kgrag.knowledge.walk import store as walk_store
from kgrag.storage.capabilities import Capability, feature, supports
from kgrag.storage.layout import (
    CHUNK_VECTORS,
    CHUNKS,
    DOC_GRAPH,
    EXTRACTORS_META,
    FACTS,
    FULL_DOCS,
    SUPPORT,
    parse_support_key,
    support_key,
)
from kgrag.storage.layout.rows import ChunkRow, DocGraphRow, FactsRow, SupportRow
from kgrag.storage.layout.typed import TypedKV, read_meta
from kgrag.types import Chunk, DocRecord, Extraction

if TYPE_CHECKING:
    from kgrag.llm.service import ChatService
    from kgrag.storage.base import Storage

Pair = tuple[str, str]
Key = str | Pair


@dataclass(slots=True)
class NewVersion:
    """A document's version to commit: its record, chunks and fresh work."""

    record: DocRecord
    sort_key: str
    chunks: list[Chunk]  # distinct ids, in document order
    extractions: dict[str, Extraction] = field(default_factory=dict)  # extracted this run
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # embedded this run


@dataclass(slots=True)
class Change:
    """New committed versions, and documents whose contribution is retracted."""

    add: list[NewVersion] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)  # their records go unless re-added
    # Curation (kgrag.curation): names whose keys are recomputed although no
    # document changed, the records to plan with (default: the stored ones),
    # and the writes of those records, made in the change's transaction.
    recompute: list[str] = field(default_factory=list)
    curation: Curation | None = None
    commit: Callable[[], Awaitable[None]] | None = None
    # Runs first inside the transaction and may refuse it (a worker's lease check).
    guard: Callable[[], Awaitable[None]] | None = None


@dataclass(slots=True)
class ChangeStats:
    """What one change did (for reports and benchmarks)."""

    chunks_added: int = 0
    chunks_removed: int = 0
    nodes_written: int = 0
    nodes_deleted: int = 0
    edges_written: int = 0
    edges_deleted: int = 0
    dead_chunks: list[str] = field(default_factory=list)  # chunks no document owns any more


@dataclass(slots=True)
class _Work:
    """The applier's working state for one change."""

    change: Change
    docs: set[str]
    chunks: dict[str, StoredChunk] = field(default_factory=dict)  # affected chunks
    stored: dict[str, FactsRow] = field(default_factory=dict)  # their facts records as read
    new_chunks: dict[str, Chunk] = field(default_factory=dict)  # not stored before
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    support: dict[Key, list[str]] = field(default_factory=dict)
    facts: dict[str, ChunkFacts] = field(default_factory=dict)

    def live(self) -> dict[str, StoredChunk]:
        return {c: s for c, s in self.chunks.items() if s.owners}

    def dead(self) -> list[str]:
        return sorted(c for c, s in self.chunks.items() if not s.owners)


Extract = Callable[[Chunk], Awaitable[Extraction]]
Embed = Callable[[list[str]], Awaitable[np.ndarray]]


CLAIM_BATCH = 8  # deferred summaries a worker takes at a time (stores with many writers)


class ChangeApplier:
    """Applies :class:`Change` objects to one storage (see the module docstring)."""

    def __init__(
        self,
        storage: Storage,
        *,
        policy: MergePolicy,
        chat: ChatService | None,
        language: str,
        extractor_kind: str,
        extract: Extract,
        embed: Embed,
        vectors: GraphVectors,
    ):
        self.storage = storage
        self.policy, self.chat, self.language = policy, chat, language
        self.kind, self._extract, self._embed = extractor_kind, extract, embed
        self.graph_vectors = vectors
        self.pending = PendingSummaries(storage)
        self.cache = FactsCache()
        self.curation = CurationStore(storage)
        self.planner = CuratedPlanner(storage, self.cache, policy, extractor_kind)

    async def apply(self, change: Change) -> ChangeStats:
        """Read, plan and write ``change`` with no other change committing in between."""
        async with self.storage.serial():
            return await self._apply(change)

    async def _apply(self, change: Change) -> ChangeStats:
        work = _Work(change, {v.record.id for v in change.add} | set(change.remove))
        await self._load_chunks(work)
        await self._fill_missing(work)
        names, pairs = _touched(work.chunks.values())
        await self._load_support(work, names, pairs)
        cur = change.curation if change.curation is not None else await self.curation.current()
        known: dict[Key, list[str]] = dict(work.support)
        if change.recompute:
            more_names, more_pairs = await self.planner.around(change.recompute, cur, known)
            names, pairs = names | more_names, pairs | more_pairs
        planned = await self.planner.plan(names, pairs, cur, known, work.facts, time.time())
        plans = planned.plans
        waiting = await self._summaries(plans)
        embedded = await self.graph_vectors.prepare(
            plans.plan, planned.old_nodes, planned.old_edges, skip={p.key for p in waiting}
        )
        rows = await self._chunk_rows(work)
        touched: list[Key] = [*planned.names, *planned.pairs, *plans.dead_nodes, *plans.dead_edges]
        async with self.storage.transaction():
            if change.guard is not None:
                await change.guard()
            await self._write_chunks(work, rows)
            await self._write_graph(work, plans)
            await self.graph_vectors.write(embedded, plans.dead_nodes, plans.dead_edges)
            await self._write_documents(work)
            await walk_store.record(self.storage, touched, [*work.dead(), *work.new_chunks])
            await self.pending.mark(touched, [p.key for p in waiting])
            if change.commit is not None:
                await change.commit()
        return _stats(work, plans)

    async def _summaries(self, plans: KeyPlans) -> list[MergePlan]:
        """Summaries now without a chat model (cheap); with one, later (see ``finish``)."""
        if self.chat is None:
            await summarise_plans(
                plans.plan.all(), None, policy=self.policy, language=self.language
            )
            return []
        return provisional(plans.plan.all(), self.policy)

    async def finish(self, batch: int = 256) -> int:
        """Summarise every key whose summary was deferred; returns how many.

        A store with many writers (``Capability.KEY_CLAIMS``) shares the keys out: each
        caller takes a batch nobody else holds, so workers finishing at once
        split the work; keys others hold are left to them.
        """
        claims = (
            feature(self.storage, Capability.KEY_CLAIMS)
            if supports(self.storage, Capability.KEY_CLAIMS)
            else None
        )
        done = 0
        while keys := await self.pending.next(batch if claims is None else 1 << 30):
            if claims is None:
                done += await self._finish_keys(keys)
                continue
            # small shares, so that every worker finishing now gets some
            async with claims.claim_keys([support_key(k) for k in keys], CLAIM_BATCH) as mine:
                if not mine:
                    break
                done += await self._finish_keys([parse_support_key(k) for k in mine])
        return done

    async def _finish_keys(self, keys: list[Key]) -> int:
        names = [k for k in keys if isinstance(k, str)]
        pairs = [k for k in keys if isinstance(k, tuple)]
        cur = await self.curation.current()
        planned = await self.planner.plan(names, pairs, cur, {}, {}, time.time())
        plans = planned.plans
        await summarise_plans(
            plans.plan.all(), self.chat, policy=self.policy, language=self.language
        )
        async with self.storage.serial():
            if await _moved_on(self.storage, planned):
                return 0  # another writer changed them meanwhile: plan them again
            await self._write_finished(keys, planned)
        return len(keys)

    async def _write_finished(self, keys: list[Key], planned: Planned) -> None:
        plans = planned.plans
        embedded = await self.graph_vectors.prepare(
            plans.plan, planned.old_nodes, planned.old_edges, force=set(keys)
        )
        graph = self.storage.graph
        async with self.storage.transaction():
            await graph.upsert_nodes({k: p.data for k, p in plans.plan.nodes.items() if p.changed})
            await graph.upsert_edges({k: p.data for k, p in plans.plan.edges.items() if p.changed})
            await self.graph_vectors.write(embedded, [], [])
            await walk_store.record(self.storage, keys, [])
            await self.pending.mark(keys, [])

    # -- reading ---------------------------------------------------------------
    async def _load_chunks(self, work: _Work) -> None:
        """Affected chunks with their owners as they will be after the change."""
        old = await TypedKV(self.storage.kv(DOC_GRAPH), DocGraphRow).get_many(sorted(work.docs))
        affected = {c for rec in old if rec for c in rec.get("chunks", [])}
        for version in work.change.add:
            affected.update(c.id for c in version.chunks)
        ids = sorted(affected)
        stored = await TypedKV(self.storage.kv(FACTS), FactsRow).get_many(ids)
        for cid, rec in zip(ids, stored, strict=False):
            if rec is not None:
                work.stored[cid] = rec
                chunk = StoredChunk.from_record(cid, rec)
                chunk.owners = {d: o for d, o in chunk.owners.items() if d not in work.docs}
                work.chunks[cid] = chunk
        for version in work.change.add:
            self._add_owner(work, version)

    def _add_owner(self, work: _Work, version: NewVersion) -> None:
        """Make ``version``'s document an owner of its chunks (fresh extractions win over errors)."""
        doc = version.record.id
        for chunk in version.chunks:
            stored = work.chunks.get(chunk.id)
            fresh = version.extractions.get(chunk.id)
            if fresh is not None and (stored is None or (stored.error and not fresh.error)):
                replaced = StoredChunk.from_extraction(chunk.id, self.kind, fresh)
                if stored is not None:
                    replaced.owners = stored.owners
                work.chunks[chunk.id] = stored = replaced
            if chunk.id in version.vectors:
                work.vectors[chunk.id] = version.vectors[chunk.id]
            if stored is not None:
                stored.owners[doc] = [
                    version.sort_key,
                    chunk.order,
                    chunk.file_path,
                    chunk.location,
                ]

    async def _fill_missing(self, work: _Work) -> None:
        """Chunks another change dropped after this document was prepared: do them now."""
        for version in work.change.add:
            doc = version.record.id
            for chunk in version.chunks:
                if chunk.id not in work.chunks:
                    stored = StoredChunk.from_extraction(
                        chunk.id, self.kind, await self._extract(chunk)
                    )
                    work.chunks[chunk.id] = stored
                stored = work.chunks[chunk.id]
                stored.owners.setdefault(
                    doc, [version.sort_key, chunk.order, chunk.file_path, chunk.location]
                )
        unstored = await self.storage.kv(CHUNKS).missing(list(work.chunks))
        for version in work.change.add:
            for chunk in version.chunks:
                if chunk.id in unstored:
                    work.new_chunks.setdefault(chunk.id, chunk)
        need = [c for c in work.new_chunks if c not in work.vectors]
        work.vectors.update(await self.storage.vectors(CHUNK_VECTORS).get_vectors(need))
        need = [c for c in need if c not in work.vectors]
        if need:
            vecs = await self._embed([work.new_chunks[c].content for c in need])
            work.vectors.update(zip(need, vecs, strict=False))

    async def _load_support(self, work: _Work, names: set[str], pairs: set[Pair]) -> None:
        """Supporting chunks of every touched key after the change, and their facts."""
        keys: list[Key] = [*sorted(names), *sorted(pairs)]
        support = TypedKV(self.storage.kv(SUPPORT), SupportRow)
        stored = await support.get_many([support_key(k) for k in keys])
        dead, live = set(work.dead()), work.live()
        holders = _holders(live.values())
        for key, row in zip(keys, stored, strict=False):
            chunks = set(row.get("chunks", []) if row else []) - dead
            chunks.update(holders.get(key, ()))
            work.support[key] = sorted(chunks)
        work.facts = {c: self.cache.facts(s) for c, s in live.items()}
        others = sorted({c for cs in work.support.values() for c in cs} - set(work.facts))
        for cid, rec in zip(others, await self.storage.kv(FACTS).get_many(others), strict=False):
            if rec is not None and rec.get("owners"):
                work.facts[cid] = self.cache.facts(StoredChunk.from_record(cid, rec))

    async def _chunk_rows(self, work: _Work) -> dict[str, ChunkRow]:
        """``text_chunks`` rows to write: new live chunks, and those whose owners changed."""
        live = work.live()
        known = [c for c in sorted(live) if c not in work.new_chunks]
        before: dict[str, ChunkRow] = {}
        read = await TypedKV(self.storage.kv(CHUNKS), ChunkRow).get_many(known)
        for cid, row in zip(known, read, strict=False):
            if row is not None:
                before[cid] = row
        bases: dict[str, dict[str, object]] = {cid: dict(row) for cid, row in before.items()}
        for cid, chunk in work.new_chunks.items():
            if cid in live:
                bases[cid] = {"content": chunk.content, "tokens": chunk.tokens}
        rows = {cid: _placed(base, live[cid]) for cid, base in bases.items()}
        return {cid: row for cid, row in rows.items() if row != before.get(cid)}

    # -- writing ---------------------------------------------------------------
    async def _write_chunks(self, work: _Work, rows: dict[str, ChunkRow]) -> None:
        s, dead = self.storage, work.dead()
        live = work.live()
        if dead:
            await s.kv(CHUNKS).delete(dead)
            await s.kv(FACTS).delete(dead)
            await s.vectors(CHUNK_VECTORS).delete(dead)
            if s.lexical is not None:
                await s.lexical.delete(dead)
        await s.kv(CHUNKS).upsert(rows)
        records = {c: live[c].to_record() for c in sorted(live)}
        await s.kv(FACTS).upsert({c: r for c, r in records.items() if r != work.stored.get(c)})
        fresh = [c for c in sorted(work.new_chunks) if c in live]
        if fresh:
            await s.vectors(CHUNK_VECTORS).upsert(
                fresh,
                np.stack([work.vectors[c] for c in fresh]),
                [{"doc_id": rows[c]["doc_id"], "file_path": rows[c]["file_path"]} for c in fresh],
            )
            if s.lexical is not None:
                await s.lexical.add({c: rows[c]["content"] for c in fresh})

    async def _write_graph(self, work: _Work, plans: KeyPlans) -> None:
        g, kv = self.storage.graph, self.storage.kv(SUPPORT)
        await g.delete_edges(plans.dead_edges)
        await g.delete_nodes(plans.dead_nodes)
        await g.upsert_nodes({k: p.data for k, p in plans.plan.nodes.items() if p.changed})
        await g.upsert_edges({k: p.data for k, p in plans.plan.edges.items() if p.changed})
        empty = [support_key(k) for k, cs in work.support.items() if not cs]
        await kv.delete(empty)
        await kv.upsert({support_key(k): {"chunks": cs} for k, cs in work.support.items() if cs})

    async def _write_documents(self, work: _Work) -> None:
        s = self.storage
        added = {v.record.id for v in work.change.add}
        gone = sorted(set(work.change.remove) - added)
        if gone:
            await s.kv(DOC_GRAPH).delete(gone)
            await s.kv(FULL_DOCS).delete(gone)
            await s.doc_status.delete(gone)
        await s.kv(DOC_GRAPH).upsert(
            {v.record.id: {"chunks": [c.id for c in v.chunks]} for v in work.change.add}
        )
        if work.change.add:
            await s.doc_status.upsert([v.record for v in work.change.add])
        kinds = {s_.extractor for s_ in work.live().values()}
        await _note_extractors(s, kinds)


async def _moved_on(storage: Storage, planned: Planned) -> bool:
    """Whether a node or edge ``planned`` read has been written since."""
    g = storage.graph
    nodes = await g.get_nodes(planned.names)
    edges = await g.get_edges(planned.pairs)
    return nodes != planned.old_nodes or edges != planned.old_edges


def _touched(chunks: Iterable[StoredChunk]) -> tuple[set[str], set[Pair]]:
    names: set[str] = set()
    pairs: set[Pair] = set()
    for chunk in chunks:
        n, p = chunk.keys()
        names |= n
        pairs |= p
    return names, pairs


def _placed(base: dict[str, object], chunk: StoredChunk) -> ChunkRow:
    """``base`` (a stored row, or a new chunk's text) set where the chunk's canonical owner has it."""
    doc, owner = chunk.owner()
    base.update(
        doc_id=doc,
        order=int(owner.order),
        file_path=owner.file_path,
        doc_ids=sorted(chunk.owners),
        location=owner.location,
    )
    return cast("ChunkRow", base)  # content and tokens from the base, every other field set here


def _holders(chunks: Iterable[StoredChunk]) -> dict[Key, list[str]]:
    """For each key, the given chunks that support it."""
    out: dict[Key, list[str]] = {}
    for chunk in chunks:
        names, pairs = chunk.keys()
        keys: list[Key] = [*names, *pairs]
        for key in keys:
            out.setdefault(key, []).append(chunk.chunk_id)
    return out


async def _note_extractors(storage: Storage, kinds: set[str]) -> None:
    seen = await read_meta(storage, EXTRACTORS_META, list[str]) or []
    merged = sorted(set(seen) | kinds)
    if merged != seen:
        await storage.set_meta(EXTRACTORS_META, merged)


def _stats(work: _Work, plans: KeyPlans) -> ChangeStats:
    live = work.live()
    return ChangeStats(
        chunks_added=sum(1 for c in work.new_chunks if c in live),
        chunks_removed=len(work.dead()),
        dead_chunks=work.dead(),
        nodes_written=sum(1 for p in plans.plan.nodes.values() if p.changed),
        nodes_deleted=len(plans.dead_nodes),
        edges_written=sum(1 for p in plans.plan.edges.values() if p.changed),
        edges_deleted=len(plans.dead_edges),
    )
