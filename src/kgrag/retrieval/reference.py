"""The record of one reference number: a context item and the document span behind it.

Kept free of other query modules so results (:class:`~kgrag.retrieval.param.QueryResult`)
can hold it; :mod:`kgrag.retrieval.context.references` builds them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

Kind = Literal["entity", "relation", "chunk"]


def location_text(location: dict[str, Any] | None) -> str:
    """``p. 12, §3.2 Licensing`` from a chunk's location (``""`` when it says nothing)."""
    location = location or {}
    parts = []
    pages = location.get("pages")
    if pages:
        first, last = pages[0], pages[-1]
        parts.append(f"p. {first}" if first == last else f"pp. {first}-{last}")
    section = location.get("section") or []
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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; keeps the older keys ``reference_id``, ``file_path``, ``location``."""
        data = {f: _copy(getattr(self, f)) for f in FIELDS}  # asdict's deep copy, shallow here
        number = data.pop("number")
        where = self.location
        return {"reference_id": str(number), **data, **({"location": where} if where else {})}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Reference:
        """The record back from :meth:`to_dict`."""
        names = set(cls.__dataclass_fields__) - {"number"}
        values = {k: v for k, v in data.items() if k in names}
        return cls(int(data["reference_id"]), **values)

    def place(self, chunk_id: str, row: dict[str, Any]) -> None:
        """Point at ``row``'s span (a text_chunks row, or a chunk's fields)."""
        location = row.get("location") or {}
        self.chunk_id = chunk_id
        self.doc_id = str(row.get("doc_id") or "")
        self.file_path = str(row.get("file_path") or "unknown_source")
        pages = location.get("pages")
        self.pages = [int(p) for p in pages] if pages else None
        self.section = [str(s) for s in location.get("section") or []]
        self.start, self.end = location.get("start"), location.get("end")
        self.text = str(row.get("content") or "")


FIELDS = tuple(f.name for f in fields(Reference))


def _copy(value: Any) -> Any:
    """Lists copied (their items are ints and strings), everything else as it is."""
    return list(value) if isinstance(value, list) else value
