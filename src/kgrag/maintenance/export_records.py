"""The canonical JSON export (``kgrag export --format json``), as typed records.

:func:`kgrag.maintenance.export.export_graph` builds it; every other format
is a view of it, and ``kgrag import --from kgrag`` reads it back. An entity
or relation holds every field its stored row holds (the ones of
:class:`~kgrag.storage.layout.rows.NodeRow` / ``EdgeRow``, and any other a
node kept); a chunk's stored extraction rides along as ``facts``.
"""

# no ``from __future__ import annotations``: TypedDict reads Required from evaluated annotations
from collections.abc import Mapping, Sequence
from typing import NotRequired, Required, TypedDict

from kgrag.storage.layout.rows import EdgeRow, FactsRow, NodeRow


class ExportEntity(NodeRow, total=False):
    """A node and its name (timestamps left out with ``timestamps=False``)."""

    name: Required[str]
    updated_at: float


class ExportRelation(EdgeRow, total=False):
    """An edge and its canonical endpoints ``src`` <= ``tgt`` (always there)."""

    updated_at: float


class ExportChunk(TypedDict):
    """A live chunk: its id, the ``text_chunks`` fields, its text and stored extraction."""

    id: str
    doc_id: str | None
    doc_ids: list[str] | None
    file_path: str | None
    location: dict[str, object] | None
    order: int | None
    tokens: int | None
    content: str | None
    facts: FactsRow | None


class ExportDocument(TypedDict):
    id: str
    source: str | None
    file_path: str
    content_hash: str
    status: str
    disabled: bool
    metadata: dict[str, object]
    updated_at: NotRequired[float]


class ExportData(TypedDict):
    format: str
    version: int
    entities: list[ExportEntity]
    relations: list[ExportRelation]
    chunks: list[ExportChunk]
    curation: dict[str, list[dict[str, object]]]  # knowledge.curation.export_records
    documents: list[ExportDocument]


Rows = Sequence[Mapping[str, object]]


def tables(data: ExportData) -> dict[str, Rows]:
    """The export's four tables by name (entities, relations, chunks, documents)."""
    return {
        "entities": data["entities"],
        "relations": data["relations"],
        "chunks": data["chunks"],
        "documents": data["documents"],
    }
