"""Plain text: the text itself, one paragraph block per run between blank lines."""

from __future__ import annotations

from kgrag.ingest.blocks import Parsed, text_blocks


def parse_text(text: str) -> Parsed:
    """``text`` unchanged, with its paragraphs as blocks."""
    return Parsed(text, text_blocks(text))
