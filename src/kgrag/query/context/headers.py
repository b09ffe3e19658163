"""Context wording: the section headers and the fence around each section."""

from __future__ import annotations

ENTITIES_HEADER = "Knowledge graph entities (one JSON object per line):"
RELATIONS_HEADER = "Knowledge graph relations (one JSON object per line):"
CHUNKS_HEADER = (
    "Document chunks (one JSON object per line; reference_id points into the "
    "Reference Document List):"
)
REFERENCES_HEADER = "Reference Document List:"


def fenced(body: str, lang: str = "") -> str:
    """``body`` inside a Markdown code fence."""
    return f"```{lang}\n{body}\n```"
