"""One document's turn: merge its extractions into the graph and commit.

Reads the current state of every entity and relation the document touches,
merges (``kgrag.graph.merge``), summarises descriptions that grew past the
thresholds (``kgrag.graph.summary``), embeds what changed, and writes
chunks, vectors, graph and status in one transaction.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from kgrag.graph.batch import BatchInput, needed_keys, plan_batch
from kgrag.graph.policy import MergePolicy
from kgrag.graph.summary import apply_summaries
from kgrag.ingest.chunking import make_chunks_for_settings
from kgrag.ingest.ids import entity_vector_id, relation_vector_id
from kgrag.types import Chunk, DocRecord, DocStatus, Document, Extraction


def entity_text(name: str, node: dict[str, Any], compact: bool = False) -> str:
    """The text an entity's vector embeds: its name and description, or its name alone.

    ``compact`` is for graphs built by the NLP extractor, whose descriptions
    are the chunk's own sentences (already embedded with the chunk): the
    name alone is what a question's keywords are matched against, and it
    embeds many times faster than a paragraph.
    """
    return name if compact else f"{name}\n{node.get('description', '')}"


def relation_text(key: tuple[str, str], edge: dict[str, Any], compact: bool = False) -> str:
    """The text a relation's vector embeds; ``compact``: a short ``source keywords target`` fact."""
    if compact:
        return " ".join(p for p in (key[0], edge.get("keywords", "").replace(",", ""), key[1]) if p)
    return f"{edge.get('keywords', '')}\t{key[0]}\n{key[1]}\n{edge.get('description', '')}"


class DocumentMerger:
    def __init__(self, deps):
        self.deps = deps
        self.storage = deps.storage
        self.policy = MergePolicy.from_settings(deps.settings, tokenizer=deps.tokenizer)

    def chunk(self, doc: Document) -> list[Chunk]:
        return make_chunks_for_settings(doc, self.deps.settings, self.deps.tokenizer)

    async def commit(self, record: DocRecord,
                     prepared: tuple[list[Chunk], list[Extraction], np.ndarray]) -> None:
        chunks, extractions, chunk_vectors = prepared
        graph = self.storage.graph
        kind = self.deps.extractor_kind
        names, keys = needed_keys(extractions)
        batch = BatchInput(extractions, await graph.get_nodes(names),
                           await graph.get_edges(keys), now=time.time(), extractor=kind)
        plan = plan_batch(batch, self.policy)
        await apply_summaries(plan.all(), self.deps.chat, policy=self.policy,
                              language=self.deps.settings.language)
        old_nodes, old_edges = batch.existing_nodes, batch.existing_edges
        nodes = {k: p.data for k, p in plan.nodes.items() if p.changed}
        edges = {k: p.data for k, p in plan.edges.items() if p.changed}
        compact = kind == "nlp"
        ent_text = {n: entity_text(n, d, compact) for n, d in nodes.items()}
        rel_text = {k: relation_text(k, d, compact) for k, d in edges.items()}
        ent_changed = [n for n in nodes
                       if not old_nodes.get(n) or entity_text(n, old_nodes[n], compact) != ent_text[n]]
        rel_changed = [k for k in edges
                       if not old_edges.get(k) or relation_text(k, old_edges[k], compact) != rel_text[k]]
        texts = [ent_text[n] for n in ent_changed] + [rel_text[k] for k in rel_changed]
        vectors = (await self.deps.embed.embed(texts, kind="document")
                   if texts else np.zeros((0, 0), dtype=np.float32))
        ent_vecs, rel_vecs = vectors[:len(ent_changed)], vectors[len(ent_changed):]

        record.status, record.updated_at, record.error = DocStatus.PROCESSED, time.time(), None
        async with self.storage.transaction():
            await self._write_chunks(chunks, chunk_vectors)
            await graph.upsert_nodes(nodes)
            await graph.upsert_edges(edges)
            if ent_changed:
                await self.storage.vectors("entities").upsert(
                    [entity_vector_id(n) for n in ent_changed], ent_vecs,
                    [{"name": n} for n in ent_changed])
            if rel_changed:
                await self.storage.vectors("relations").upsert(
                    [relation_vector_id(*k) for k in rel_changed], rel_vecs,
                    [{"src": k[0], "tgt": k[1]} for k in rel_changed])
            await self.storage.kv("doc_graph").upsert({record.id: {
                "entities": sorted(nodes), "relations": [list(k) for k in sorted(edges)]}})
            await self.storage.doc_status.upsert([record])
            await self._note_extractor(kind)

    async def _write_chunks(self, chunks: list[Chunk], vectors: np.ndarray) -> None:
        if not chunks:
            return
        await self.storage.kv("text_chunks").upsert({
            c.id: {"content": c.content, "tokens": c.tokens, "doc_id": c.doc_id,
                   "order": c.order, "file_path": c.file_path} for c in chunks})
        await self.storage.vectors("chunks").upsert(
            [c.id for c in chunks], vectors,
            [{"doc_id": c.doc_id, "file_path": c.file_path} for c in chunks])
        if self.storage.lexical is not None:
            await self.storage.lexical.add({c.id: c.content for c in chunks})

    async def _note_extractor(self, kind: str) -> None:
        seen = await self.storage.get_meta("extractors") or []
        if kind not in seen:
            await self.storage.set_meta("extractors", sorted([*seen, kind]))
