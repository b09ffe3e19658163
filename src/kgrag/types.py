"""Plain data records shared by every layer.

These are deliberately small dataclasses with no behaviour beyond
conversion to and from the dict form the stores keep.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any

# Separator between merged description fragments / source ids (LightRAG's).
SEP = "<SEP>"


class DocStatus(enum.StrEnum):
    PENDING = "pending"
    PROCESSING = "processing"
    PROCESSED = "processed"
    FAILED = "failed"


@dataclass(slots=True)
class Document:
    """A document as loaded from a file or given by the caller."""

    id: str  # "doc-" + md5(source), or md5(content) for a text without a source
    content: str
    file_path: str = "unknown_source"
    source: str | None = None  # canonical absolute path, or an id the caller gave
    metadata: dict[str, Any] = field(default_factory=dict)
    replaces: list[str] = field(default_factory=list)  # ids this document supersedes
    warnings: list[str] = field(default_factory=list)  # what the loader had to guess or drop
    relative_path: str | None = None  # relative to the folder named when it was indexed
    # Structure over ``content`` (kgrag.ingest.blocks.Block: headings, paragraphs,
    # tables, pages, with offsets); None for raw texts. Typed Any: types imports no layer.
    blocks: list[Any] | None = None

    @property
    def sort_key(self) -> str:
        """Where the document's fragments go in canonical order."""
        return self.source or self.id


@dataclass(slots=True)
class Chunk:
    id: str  # "chunk-" + md5(content)
    doc_id: str
    content: str
    tokens: int
    order: int
    file_path: str = "unknown_source"
    # Where the chunk sits in its document: e.g. section path, pages, offsets
    # (filled by chunkers that know; stored with the chunk's row).
    location: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class DocRecord:
    """What the doc-status store keeps per document."""

    id: str
    status: DocStatus
    file_path: str
    content_length: int
    content_summary: str
    enqueue_seq: int = 0  # processing order (the graph does not depend on it)
    chunk_ids: list[str] = field(default_factory=list)
    error: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    source: str | None = None  # identity: canonical path or caller's id
    content_hash: str = ""  # md5 of the content: says whether it changed
    metadata: dict[str, Any] = field(default_factory=dict)
    disabled: bool = False  # indexed, but never retrieved
    warnings: list[str] = field(default_factory=list)  # chunk problems (chunk id: reason)
    replaces: list[str] = field(default_factory=list)  # ids to retract when this one commits
    load_warnings: list[str] = field(default_factory=list)  # from the loader (encoding guessed...)
    relative_path: str | None = None  # relative to the folder named when it was indexed

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = self.status.value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DocRecord:
        known = cls.__dataclass_fields__  # records of older versions lack new fields
        d = {k: v for k, v in d.items() if k in known}
        d["status"] = DocStatus(d["status"])
        return cls(**d)


@dataclass(slots=True)
class ExtractedEntity:
    """One entity row as the extractor produced it, for one chunk."""

    name: str
    type: str
    description: str
    chunk_id: str = ""
    file_path: str = ""


@dataclass(slots=True)
class ExtractedRelation:
    """One relation row as stated in one chunk (direction kept as stated)."""

    source: str
    target: str
    keywords: str
    description: str
    weight: float = 1.0
    chunk_id: str = ""
    file_path: str = ""


@dataclass(slots=True)
class Extraction:
    """Everything extracted from one chunk."""

    entities: list[ExtractedEntity] = field(default_factory=list)
    relations: list[ExtractedRelation] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Records the model wrote malformed (a required field missing or empty,
    # or cut off) and that were rejected (kgrag.extract.collect).
    rejected: int = 0
    # Why the chunk yielded no usable records (None: it extracted cleanly,
    # possibly with warnings). The pipeline records it on the document.
    error: str | None = None
