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


class DocStatus(str, enum.Enum):
    PENDING = "pending"
    PROCESSING = "processing"
    PROCESSED = "processed"
    FAILED = "failed"


@dataclass(slots=True)
class Document:
    """A document as loaded from a file or given by the caller."""

    id: str  # "doc-" + md5(content)
    content: str
    file_path: str = "unknown_source"


@dataclass(slots=True)
class Chunk:
    id: str  # "chunk-" + md5(content)
    doc_id: str
    content: str
    tokens: int
    order: int
    file_path: str = "unknown_source"

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
    enqueue_seq: int = 0  # merge order: documents merge in enqueue order
    chunk_ids: list[str] = field(default_factory=list)
    error: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = self.status.value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "DocRecord":
        d = dict(d)
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
    # Why the chunk yielded no usable records (None: it extracted cleanly,
    # possibly with warnings). The pipeline records it on the document.
    error: str | None = None
