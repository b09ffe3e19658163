"""The record of one reference number: a context item and the document span behind it.

Kept free of other query modules so results (:class:`~kgrag.retrieval.param.QueryResult`)
can hold it; :mod:`kgrag.retrieval.context.references` builds them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kgrag.retrieval.shapes import Kind, ReferenceData

__all__ = ["Kind", "Reference", "ReferenceData", "location_text"]


def _list(value: object) -> list[object]:
    """A JSON list field of a stored row; anything else is empty."""
    return list(value) if isinstance(value, (list, tuple)) else []


def location_text(location: Mapping[str, object] | None) -> str:
    """``p. 12, §3.2 Licensing`` from a chunk's location (``""`` when it says nothing)."""
    location = location or {}
    parts = []
    pages = _list(location.get("pages"))
    if pages:
        first, last = pages[0], pages[-1]
        parts.append(f"p. {first}" if first == last else f"pp. {first}-{last}")
    section = _list(location.get("section"))
    if section:
        head = " ".join(str(section[-1]).split())
        parts.append("§" + (head if len(head) <= 80 else head[:79] + "…"))
    return ", ".join(parts)


@dataclass(slots=True)
class Reference:
    """One reference number: the context item and the document span behind it.

    ``start`` / ``end`` are offsets into the document's stored text (None
    when unknown); ``text`` is the span's text, so
    ``document_text[start:end] == text``. ``cited``: the answer cites it.
    """

    number: int
    kind: Kind
    name: str  # entity name, "A <-> B" or chunk id
    chunk_id: str = ""
    doc_id: str = ""
    file_path: str = ""
    pages: list[int] | None = None
    section: list[str] = field(default_factory=list)
    start: int | None = None
    end: int | None = None
    text: str = ""
    chunks: list[int] = field(default_factory=list)  # numbers of its source chunks in the context
    sources: list[str] = field(default_factory=list)  # source chunk ids (entities, relations)
    cited: bool = False

    @property
    def location(self) -> str:
        """Pages and section as one short text (``p. 2, §3.2 Licensing``)."""
        return location_text({"pages": self.pages, "section": self.section})

    def to_dict(self) -> ReferenceData:
        """JSON-ready; keeps the older keys ``reference_id``, ``file_path``, ``location``."""
        data: ReferenceData = {
            "reference_id": str(self.number),
            "kind": self.kind,
            "name": self.name,
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "file_path": self.file_path,
            "pages": None if self.pages is None else list(self.pages),
            "section": list(self.section),
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "chunks": list(self.chunks),
            "sources": list(self.sources),
            "cited": self.cited,
        }
        where = self.location
        if where:
            data["location"] = where
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Reference:
        """The record back from :meth:`to_dict` (a dict read from JSON, too)."""
        names = set(cls.__dataclass_fields__) - {"number"}
        values = {k: v for k, v in data.items() if k in names}
        return cls(_int(data["reference_id"]), **values)  # type: ignore[arg-type]

    def place(self, chunk_id: str, row: Mapping[str, object]) -> None:
        """Point at ``row``'s span (a text_chunks row, or a chunk's fields)."""
        location = row.get("location")
        location = location if isinstance(location, Mapping) else {}
        self.chunk_id = chunk_id
        self.doc_id = str(row.get("doc_id") or "")
        self.file_path = str(row.get("file_path") or "unknown_source")
        pages = _list(location.get("pages"))
        self.pages = [_int(p) for p in pages] if pages else None
        self.section = [str(s) for s in _list(location.get("section"))]
        self.start, self.end = _offset(location.get("start")), _offset(location.get("end"))
        self.text = str(row.get("content") or "")


def _int(value: object) -> int:
    """A JSON number or numeric string as an int."""
    return int(value) if isinstance(value, (int, float)) else int(str(value))


def _offset(value: object) -> int | None:
    """A stored character offset (ints in JSON; None when unknown)."""
    return value if isinstance(value, int) else None
