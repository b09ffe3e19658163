"""What every import source is read into: documents with their chunks and the chunks' facts.

An import never writes the graph directly. Each source (a user-built
graph, a kgrag export, a LightRAG working directory) is read into an
:class:`ImportPlan`: documents, each with its chunks in order, each chunk
with the entity and relation rows it contributes (the ``chunk_facts``
rows of :mod:`kgrag.indexing.facts`). :mod:`kgrag.maintenance.importing.commit`
then commits them like an indexing run commits extracted documents, so
the graph stays a function of the live documents and delete, supersede,
check, rebuild and export treat imported documents like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kgrag.errors import KGRagError
from kgrag.ingest.ids import chunk_id

Pair = tuple[str, str]


class ImportFormatError(KGRagError):
    """An import source is missing, malformed, or not of the kind it was named as."""


@dataclass(slots=True)
class ImportedChunk:
    """One chunk with the rows it contributes to the graph."""

    content: str
    entities: list[list[str]] = field(default_factory=list)  # [name, type, description]
    relations: list[list[Any]] = field(default_factory=list)  # [src, tgt, keywords, desc, weight]
    extractor: str = "import"
    tokens: int = 0
    location: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return chunk_id(self.content)


@dataclass(slots=True)
class ImportedDoc:
    """A document to commit with exactly these chunks."""

    id: str
    file_path: str
    chunks: list[ImportedChunk]
    source: str | None = None
    content: str | None = None  # the full text; the chunks joined when unknown
    content_hash: str | None = None  # md5 of the text; from ``content`` when unknown
    metadata: dict[str, Any] = field(default_factory=dict)
    disabled: bool = False
    relative_path: str | None = None
    sort_key: str | None = None  # canonical order key; source or id when unknown

    def text(self) -> str:
        if self.content is not None:
            return self.content
        return "\n\n".join(c.content for c in self.chunks)


@dataclass(slots=True)
class ImportPlan:
    """Everything one import commits, plus what it could reuse."""

    source: str  # "kg", "kgrag" or "lightrag"
    docs: list[ImportedDoc] = field(default_factory=list)
    # Stored descriptions to keep when the fragments they summarise are the same
    # (a LightRAG or kgrag summary is reused instead of asking the LLM again).
    node_seeds: dict[str, dict[str, Any]] = field(default_factory=dict)
    edge_seeds: dict[Pair, dict[str, Any]] = field(default_factory=dict)
    text_vectors: dict[str, np.ndarray] = field(default_factory=dict)  # embedded text -> vector
    # Curation records to commit with the documents (a kgrag export's ``curation`` block).
    curation: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ImportReport:
    """What an import did."""

    source: str
    path: str
    documents: list[str] = field(default_factory=list)
    chunks: int = 0
    entities: int = 0  # graph size after the import
    relations: int = 0
    vectors_reused: int = 0
    vectors_embedded: int = 0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "path": self.path,
            "documents": len(self.documents),
            "chunks": self.chunks,
            "entities": self.entities,
            "relations": self.relations,
            "vectors_reused": self.vectors_reused,
            "vectors_embedded": self.vectors_embedded,
            "warnings": self.warnings,
        }
