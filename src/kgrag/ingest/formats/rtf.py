"""RTF through striprtf: paragraphs and tables, no styles.

striprtf turns the control words into text (``\\par`` a line break,
``\\cell`` a ``|``, ``\\row`` a line break; code pages from ``\\ansicpg``
and the font table, ``\\uN`` escapes, pictures dropped). Each non-blank
line becomes a paragraph, and a run of lines ending in ``|`` (the rows
of a table) a table block. RTF headings are styles, which striprtf does
not report, so an RTF file has no section paths.
"""

from __future__ import annotations

from collections.abc import Callable

from kgrag.errors import LoaderError
from kgrag.ingest.blocks import BlockBuilder, Parsed

CELL_END = "|"


def _flush(builder: BlockBuilder, rows: list[list[str]]) -> None:
    if rows:
        builder.table(rows)
        rows.clear()


def blocks_of(text: str) -> Parsed:
    """striprtf's text as paragraphs (one per line) and tables (runs of ``a|b|`` lines)."""
    builder = BlockBuilder()
    rows: list[list[str]] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        stripped = line.strip()
        if stripped.endswith(CELL_END):
            rows.append(stripped[:-1].split(CELL_END))
            continue
        _flush(builder, rows)
        builder.paragraph(stripped)
    _flush(builder, rows)
    return builder.build()


def parse_rtf(text: str, name: str = "<rtf>") -> Parsed:
    """Blocks and flat text of an RTF document (``text``: the file decoded, normally ASCII)."""
    from striprtf.striprtf import rtf_to_text as untyped

    rtf_to_text: Callable[..., str] = untyped  # striprtf's function carries no annotations

    if not text.lstrip().startswith("{\\rtf"):
        raise LoaderError(name, "not an RTF file (it does not start with {\\rtf)")
    try:
        plain = rtf_to_text(text, errors="replace")
    except Exception as exc:  # striprtf raises IndexError / ValueError / LookupError on damage
        raise LoaderError(name, f"unreadable or corrupt RTF: {exc}") from exc
    return blocks_of(plain)
