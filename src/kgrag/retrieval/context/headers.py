"""Context wording: the section headers and the fence around each section."""

from __future__ import annotations

ENTITIES_HEADER = "Knowledge graph entities (one JSON object per line; cite as [reference_id]):"
RELATIONS_HEADER = "Knowledge graph relations (one JSON object per line; cite as [reference_id]):"
CHUNKS_HEADER = (
    "Document chunks (one JSON object per line; cite as [reference_id]; the "
    "Reference Document List names each chunk's source):"
)
REFERENCES_HEADER = "Reference Document List:"


def fenced(body: str, lang: str = "") -> str:
    """``body`` inside a Markdown code fence."""
    return f"```{lang}\n{body}\n```"
