"""Commit an :class:`~kgrag.maintenance.importing.model.ImportPlan` like an indexing run would.

Every imported document becomes a committed version whose chunks are the
given ones and whose extractions are the given rows, applied through
:class:`~kgrag.indexing.changes.ChangeApplier` in one transaction with
the documents' texts (crash-safe: a kill leaves the index as it was, or
with the whole import). Importing the same plan again retracts the
previous versions of those documents in the same change, so the graph is
the same afterwards.

Two things a plain indexing run would pay for are reused when possible:
embeddings (an embedder that looks up the texts a source already embedded
with the same model, see :class:`ReusingEmbed`) and summaries (a source's
summary of a key is seeded as the stored description with the digest of
the fragments kgrag merges, so the canonical merge keeps it instead of
asking the LLM; see :func:`kgrag.knowledge.canonical.fragments_digest`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from kgrag.errors import CurationError, ExtractionError
from kgrag.indexing.changes import Change, ChangeApplier, NewVersion
from kgrag.indexing.curated import manual_facts
from kgrag.indexing.enqueue import summary_text
from kgrag.indexing.facts import StoredChunk
from kgrag.indexing.imported import GIVEN_CHUNKS, chunk_row
from kgrag.indexing.vectors import Embedded, GraphVectors, entity_text, relation_text
from kgrag.ingest.ids import content_hash, entity_vector_id, relation_vector_id
from kgrag.knowledge.canonical import ChunkFacts, fragments_digest, plan_entity, plan_relation
from kgrag.knowledge.curation import Curation, combined, parse_block, write_records
from kgrag.knowledge.curation import load as load_curation
from kgrag.maintenance.importing.model import ImportedDoc, ImportFormatError, ImportPlan
from kgrag.storage.base import edge_key
from kgrag.storage.layout import CHUNK_VECTORS, ENTITY_VECTORS, FULL_DOCS, RELATION_VECTORS
from kgrag.types import Chunk, DocRecord, DocStatus, ExtractedEntity, ExtractedRelation, Extraction

if TYPE_CHECKING:
    from kgrag.knowledge.batch import BatchPlan
    from kgrag.storage.base import Storage

Embed = Callable[[list[str]], Awaitable[np.ndarray]]
Pair = tuple[str, str]


class ReusingEmbed:
    """An embedder that answers texts it already has a vector for, and counts both kinds."""

    def __init__(self, embed: Embed, known: dict[str, np.ndarray]):
        self._embed, self.known = embed, known
        self.reused = self.embedded = 0

    async def __call__(self, texts: list[str]) -> np.ndarray:
        missing = sorted({t for t in texts if t not in self.known})
        if missing:
            vectors = await self._embed(missing)
            self.known.update(zip(missing, np.asarray(vectors, dtype=np.float32), strict=True))
            self.embedded += len(missing)
        self.reused += len(texts) - len(missing)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self.known[t] for t in texts])


class _EveryKey(GraphVectors):
    """Embeds every key the import writes, even when a seeded description left it unchanged."""

    async def prepare(
        self,
        plan: BatchPlan,
        old_nodes: Mapping[str, Mapping[str, object]],
        old_edges: Mapping[Pair, Mapping[str, object]],
        *,
        skip: Collection[str | Pair] = (),
        force: Collection[str | Pair] = (),
    ) -> Embedded:
        keys: list[str | Pair] = [*plan.nodes, *plan.edges]
        every = {k for k in keys if k not in skip}
        return await super().prepare(plan, old_nodes, old_edges, skip=skip, force=every)


async def _never(chunk: Chunk) -> Extraction:
    raise ExtractionError(f"imported chunk {chunk.id} has no facts")  # every chunk brings its own


def import_applier(base: ChangeApplier, embed: Embed, kind: str) -> ChangeApplier:
    """An applier like the indexer's, never extracting; ``kind`` names where the facts came from."""
    return ChangeApplier(
        base.storage,
        policy=base.policy,
        chat=base.chat,
        language=base.language,
        extractor_kind=kind,
        extract=_never,
        embed=embed,
        vectors=_EveryKey(base.storage, embed),
    )


def _chunks(doc: ImportedDoc) -> list[Chunk]:
    out: dict[str, Chunk] = {}
    for c in doc.chunks:
        if c.id not in out:
            out[c.id] = Chunk(
                c.id, doc.id, c.content, c.tokens, len(out), doc.file_path, c.location
            )
    return list(out.values())


def _extraction(doc: ImportedDoc, chunk_id: str) -> Extraction:
    rows = [c for c in doc.chunks if c.id == chunk_id]
    return Extraction(
        entities=[
            ExtractedEntity(n, t, d, chunk_id, doc.file_path)
            for c in rows
            for n, t, d in c.entities
        ],
        relations=[
            ExtractedRelation(s, t, k, d, float(w), chunk_id, doc.file_path)
            for c in rows
            for s, t, k, d, w in c.relations
        ],
    )


def _record(doc: ImportedDoc, chunks: list[Chunk], seq: int, now: float) -> DocRecord:
    text = doc.text()
    return DocRecord(
        id=doc.id,
        status=DocStatus.PROCESSED,
        file_path=doc.file_path,
        content_length=len(text),
        content_summary=summary_text(text),
        enqueue_seq=seq,
        chunk_ids=[c.id for c in chunks],
        created_at=now,
        updated_at=now,
        source=doc.source,
        content_hash=doc.content_hash or content_hash(text),
        metadata=dict(doc.metadata),
        disabled=doc.disabled,
        relative_path=doc.relative_path,
    )


def versions(plan: ImportPlan, first_seq: int) -> list[NewVersion]:
    """One committed version per imported document, its extractions given."""
    now, out = time.time(), []
    for i, doc in enumerate(plan.docs):
        chunks = _chunks(doc)
        out.append(
            NewVersion(
                _record(doc, chunks, first_seq + i, now),
                doc.sort_key or doc.source or doc.id,
                chunks,
                {c.id: _extraction(doc, c.id) for c in chunks},
            )
        )
    return out


def _full_docs(plan: ImportPlan, made: list[NewVersion]) -> dict[str, dict[str, object]]:
    return {
        doc.id: {
            "content": doc.text(),
            "file_path": doc.file_path,
            "source": doc.source,
            GIVEN_CHUNKS: [chunk_row(c) for c in version.chunks],
        }
        for doc, version in zip(plan.docs, made, strict=True)
    }


def _facts(made: list[NewVersion]) -> dict[str, ChunkFacts]:
    """The imported chunks as the canonical merge will see them (owners of every version)."""
    stored: dict[str, StoredChunk] = {}
    for v in made:
        for chunk in v.chunks:
            s = stored.setdefault(
                chunk.id, StoredChunk.from_extraction(chunk.id, "", v.extractions[chunk.id])
            )
            s.owners[v.record.id] = [v.sort_key, chunk.order, chunk.file_path, chunk.location]
    return {cid: s.facts() for cid, s in stored.items()}


def _seed_facts(
    made: list[NewVersion], cur: Curation, names: set[str], pairs: set[Pair], kind: str
) -> list[ChunkFacts]:
    """The imported chunks as the canonical merge will see them, through the records."""
    facts = [cur.rename(f) for f in _facts(made).values()]
    manual = manual_facts(cur, names, pairs, kind)
    return facts if manual is None else [manual, *facts]


async def _write_seeds(
    storage: Storage,
    plan: ImportPlan,
    made: list[NewVersion],
    applier: ChangeApplier,
    cur: Curation,
) -> None:
    """Seed the source's summaries of new keys that kgrag would summarise too."""
    if not plan.node_seeds and not plan.edge_seeds:
        return
    pairs = sorted(edge_key(*p) for p in plan.edge_seeds)
    facts = _seed_facts(made, cur, set(plan.node_seeds), set(pairs), applier.kind)
    now, policy = time.time(), applier.policy
    have_nodes = await storage.graph.get_nodes(sorted(plan.node_seeds))
    nodes: dict[str, dict[str, Any]] = {}
    for name, seed in plan.node_seeds.items():
        support = [f for f in facts if name in f.entity_names()]
        made_plan = (
            plan_entity(name, support, None, policy, now) if name not in have_nodes else None
        )
        if made_plan is not None and made_plan.needs_summary and seed.get("description"):
            digest = fragments_digest(made_plan.needs_summary)
            nodes[name] = {"description": seed["description"], "fragments_digest": digest}
    have_edges = await storage.graph.get_edges(pairs)
    edges: dict[Pair, dict[str, Any]] = {}
    for pair in pairs:
        seed = plan.edge_seeds.get(pair) or plan.edge_seeds.get((pair[1], pair[0])) or {}
        support = [f for f in facts if pair in f.edge_keys()]
        made_plan = (
            plan_relation(pair, support, None, policy, now) if pair not in have_edges else None
        )
        if made_plan is not None and made_plan.needs_summary and seed.get("description"):
            digest = fragments_digest(made_plan.needs_summary)
            edges[pair] = {"description": seed["description"], "fragments_digest": digest}
    await storage.graph.upsert_nodes(nodes)
    await storage.graph.upsert_edges(edges)


async def _records(storage: Storage, plan: ImportPlan) -> tuple[Curation | None, Curation]:
    """The plan's curation records, and the records the index will plan with after it."""
    have = await load_curation(storage)
    if plan.curation is None:
        return None, have
    try:
        given = parse_block(plan.curation)
        return given, combined(have, given)
    except CurationError as exc:
        raise ImportFormatError(f"the export's curation records: {exc}") from exc


def _by_kind(plan: ImportPlan, made: list[NewVersion]) -> dict[str, list[NewVersion]]:
    """Versions grouped by the extractor their facts came from (recorded on every key)."""
    out: dict[str, list[NewVersion]] = {}
    for doc, version in zip(plan.docs, made, strict=True):
        kind = doc.chunks[0].extractor if doc.chunks else "import"
        out.setdefault(kind, []).append(version)
    return out


async def _remember_vectors(storage: Storage, made: list[NewVersion], embed: ReusingEmbed) -> None:
    """Stored vectors of the imported chunks and keys, so a re-import embeds nothing unchanged."""
    ids = sorted({c.id for v in made for c in v.chunks})
    have = await storage.vectors(CHUNK_VECTORS).get_vectors(ids)
    for v in made:
        v.vectors.update(
            {c.id: have[c.id] for c in v.chunks if c.id in have and c.id not in v.vectors}
        )
    names: set[str] = set()
    pairs: set[Pair] = set()
    for v in made:
        for ex in v.extractions.values():
            names.update(e.name for e in ex.entities)
            pairs.update(edge_key(r.source, r.target) for r in ex.relations if r.source != r.target)
    nodes = await storage.graph.get_nodes(sorted(names))
    vecs = await storage.vectors(ENTITY_VECTORS).get_vectors([entity_vector_id(n) for n in nodes])
    for name, node in nodes.items():
        if (vec := vecs.get(entity_vector_id(name))) is not None:
            embed.known[entity_text(name, node, node.get("extractor") == "nlp")] = vec
    edges = await storage.graph.get_edges(sorted(pairs))
    vecs = await storage.vectors(RELATION_VECTORS).get_vectors(
        [relation_vector_id(*k) for k in edges]
    )
    for key, edge in edges.items():
        if (vec := vecs.get(relation_vector_id(*key))) is not None:
            embed.known[relation_text(key, edge, edge.get("extractor") == "nlp")] = vec


async def commit(
    storage: Storage, base: ChangeApplier, plan: ImportPlan, embed: ReusingEmbed
) -> None:
    """Commit every document of ``plan`` in one transaction, then settle deferred summaries.

    Documents imported before are retracted first (in the same transaction),
    so a re-import with other rows for the same chunk texts takes the new rows.
    The plan's curation records are written before the documents are
    committed, so they plan through them, and the keys the records name are
    recomputed last (manual facts no document touches); records that
    contradict the index's own are refused before anything is written.
    """
    made = versions(plan, await storage.doc_status.next_seq())
    given, cur = await _records(storage, plan)
    async with storage.transaction():
        await _remember_vectors(storage, made, embed)
        known = await storage.doc_status.get_many([v.record.id for v in made])
        if known:
            await import_applier(base, embed, base.kind).apply(Change(remove=sorted(known)))
        if given is not None:
            await write_records(storage, given)
        await storage.kv(FULL_DOCS).upsert(_full_docs(plan, made))
        await _write_seeds(storage, plan, made, base, cur)
        for kind, group in sorted(_by_kind(plan, made).items()):
            await import_applier(base, embed, kind).apply(Change(add=group))
        if given:  # the keys only the records make (manual facts), and those they re-map
            recompute = sorted(given.curated_names())
            await import_applier(base, embed, base.kind).apply(Change(recompute=recompute))
    await import_applier(base, embed, base.kind).finish()
