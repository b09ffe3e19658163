"""What the index keeps per live chunk and per graph key, and how it is stored.

Three key-value namespaces hold the primary record of what every document
contributed; the graph, its vectors and the lexical index are derived from
them (``kgrag check`` verifies that, ``kgrag rebuild`` recomputes it):

- ``chunk_facts``: per live chunk, its extraction (entity and relation
  rows), the extraction's warnings or error, and its *owners*: every live
  document containing the chunk, with that document's sort key, the
  chunk's position in it and its file path. Chunk ids are content hashes,
  so two documents may share a chunk.
- ``graph_support``: per entity name and per relation key, the sorted ids
  of the live chunks supporting it (uncapped, unlike ``source_ids``).
- ``doc_graph``: per document, the chunk ids of its committed version.

The names, key formats and row shapes are :mod:`kgrag.storage.layout`'s.
``summary_pending`` lists the keys whose description is provisional (the
joined fragments) until the writer summarises them (:class:`PendingSummaries`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from kgrag.knowledge.canonical import ChunkFacts
from kgrag.storage.layout import (
    PENDING,
    Pair,
    parse_support_key,
    support_key,
)
from kgrag.storage.layout.rows import FactsRow
from kgrag.types import ExtractedEntity, ExtractedRelation, Extraction

if TYPE_CHECKING:
    from kgrag.storage.base import Storage


class Owner(NamedTuple):
    """One document owning a chunk: an entry of a ``chunk_facts`` row's ``owners``."""

    sort_key: str  # the document's place in canonical order
    order: int  # the chunk's position in the document
    file_path: str
    location: dict[str, object]  # section, page, lines ({} in rows written without one)


@dataclass(slots=True)
class StoredChunk:
    """A ``chunk_facts`` record: a chunk's extraction and its owners."""

    chunk_id: str
    extractor: str
    entities: list[list[str]] = field(default_factory=list)  # [name, type, description]
    relations: list[list[Any]] = field(default_factory=list)  # [src, tgt, keywords, desc, weight]
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    # doc id -> [sort key, position, file path, location dict]
    owners: dict[str, list[Any]] = field(default_factory=dict)

    @classmethod
    def from_extraction(cls, chunk_id: str, extractor: str, ex: Extraction) -> StoredChunk:
        return cls(
            chunk_id,
            extractor,
            entities=[[e.name, e.type, e.description] for e in ex.entities],
            relations=[
                [r.source, r.target, r.keywords, r.description, float(r.weight)]
                for r in ex.relations
            ],
            warnings=list(ex.warnings),
            error=ex.error,
        )

    @classmethod
    def from_record(cls, chunk_id: str, rec: Mapping[str, object]) -> StoredChunk:
        """A ``chunk_facts`` row as the index wrote it (rows of older indexes may lack fields)."""
        row = cast("FactsRow", rec)
        return cls(
            chunk_id,
            row.get("extractor", "llm"),
            row.get("entities", []),
            row.get("relations", []),
            row.get("warnings", []),
            row.get("error"),
            {k: list(v) for k, v in row.get("owners", {}).items()},
        )

    def to_record(self) -> FactsRow:
        return {
            "extractor": self.extractor,
            "entities": self.entities,
            "relations": self.relations,
            "warnings": self.warnings,
            "error": self.error,
            "owners": dict(sorted(self.owners.items())),
        }

    def keys(self) -> tuple[set[str], set[Pair]]:
        """Entity names (entities and relation endpoints) and edge keys of the extraction."""
        names = {row[0] for row in self.entities if row[0]}
        pairs: set[Pair] = set()
        for src, tgt, *_ in self.relations:
            if src and tgt and src != tgt:
                names.update((src, tgt))
                pairs.add((src, tgt) if src <= tgt else (tgt, src))
        return names, pairs

    def owner(self) -> tuple[str, Owner]:
        """The canonical owner: the smallest (sort key, position, doc id)."""
        doc = min(self.owners, key=lambda d: (self.owners[d][0], self.owners[d][1], d))
        entry = self.owners[doc]
        return doc, Owner(entry[0], entry[1], entry[2], entry[3] if len(entry) > 3 else {})

    def facts(self) -> ChunkFacts:
        """The chunk as the canonical merge sees it (needs at least one owner)."""
        _, (sort_key, order, path, *_) = self.owner()
        paths = sorted({str(v[2]) for v in self.owners.values()})
        return ChunkFacts(
            self.chunk_id,
            (str(sort_key), int(order)),
            paths,
            self.extractor,
            entities=[ExtractedEntity(n, t, d, self.chunk_id, path) for n, t, d in self.entities],
            relations=[
                ExtractedRelation(s, t, k, d, float(w), self.chunk_id, path)
                for s, t, k, d, w in self.relations
            ],
        )


class PendingSummaries:
    """The keys whose LLM summary is still to be made (``summary_pending``)."""

    def __init__(self, storage: Storage):
        self.kv = storage.kv(PENDING)

    async def mark(self, touched: list[str | Pair], waiting: list[str | Pair]) -> None:
        """``touched`` keys are settled, except ``waiting`` ones (call inside the commit)."""
        wait = {support_key(k) for k in waiting}
        await self.kv.delete([support_key(k) for k in touched if support_key(k) not in wait])
        await self.kv.upsert({k: {} for k in sorted(wait)})

    async def next(self, limit: int) -> list[str | Pair]:
        """Up to ``limit`` waiting keys, in a fixed order."""
        keys = sorted(await self.kv.keys())[:limit]
        return [parse_support_key(k) for k in keys]

    async def count(self) -> int:
        return await self.kv.count()


# owners (doc id, repr of its entry), error, extractor, entity rows, relation rows
_Signature = tuple[tuple[tuple[str, str], ...], str | None, str, int, int]


class FactsCache:
    """:meth:`StoredChunk.facts` results, reused while a chunk's record is the same.

    A chunk's extraction never changes under its id (its id is its text's
    hash) except when an errored extraction is replaced, so the owners, the
    error and the row counts identify the record. Bounded: cleared when full.
    """

    def __init__(self, limit: int = 200_000):
        self.limit = limit
        self._items: dict[str, tuple[_Signature, ChunkFacts]] = {}

    @staticmethod
    def _signature(chunk: StoredChunk) -> _Signature:
        owners = tuple(sorted((d, repr(v)) for d, v in chunk.owners.items()))
        return (owners, chunk.error, chunk.extractor, len(chunk.entities), len(chunk.relations))

    def facts(self, chunk: StoredChunk) -> ChunkFacts:
        sig = self._signature(chunk)
        hit = self._items.get(chunk.chunk_id)
        if hit is not None and hit[0] == sig:
            return hit[1]
        if len(self._items) >= self.limit:
            self._items.clear()
        made = chunk.facts()
        self._items[chunk.chunk_id] = (sig, made)
        return made
