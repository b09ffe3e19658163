"""A document's structure: blocks over its flat text.

A loader that understands a format returns :class:`Parsed`: the flat text
(``Document.content``, from which chunk ids and the graph are computed)
and a list of :class:`Block` records, each a ``[start, end)`` span of that
text with its kind, level, section path (the headings above it, itself
included for a heading) and page number where known.

:class:`BlockBuilder` assembles both at once, so offsets are right by
construction. :func:`encode_blocks` / :func:`decode_blocks` give the
compact form kept in a document's ``full_docs`` row; decoding checks every
span against the text and drops what does not fit (a stored row is never
trusted blindly). :func:`fill_gaps` turns text no block covers into
paragraphs, so a chunker working from blocks never loses text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kgrag.storage.layout.rows import BlocksRow

HEADING, PARAGRAPH, LIST_ITEM, TABLE = "heading", "paragraph", "list_item", "table"
CODE, QUOTE, PAGE_BREAK = "code", "quote", "page_break"
KINDS = (HEADING, PARAGRAPH, LIST_ITEM, TABLE, CODE, QUOTE, PAGE_BREAK)
CELL_SEP = " | "  # between a table row's cells in the flat text; rows end lines
_CODES = {
    "heading": "h",
    "paragraph": "p",
    "list_item": "l",
    "table": "t",
    "code": "c",
    "quote": "q",
    "page_break": "b",
}
_KIND_OF = {v: k for k, v in _CODES.items()}
FORMAT_VERSION = 1


@dataclass(slots=True, frozen=True)
class Block:
    """One structural unit: ``content[start:end]`` is its text.

    ``level``: heading level (0 for a document title, 1-6) or list nesting
    depth (1 = top); ``section``: heading texts above the block, outermost
    first (a heading's own text included); ``page``: 1-based page number,
    ``None`` when the format does not say; ``rows``: a table's cells;
    ``lang``: a code block's info string. A page break is an empty span
    whose ``page`` is the page it starts.
    """

    kind: str
    start: int
    end: int
    level: int = 0
    section: tuple[str, ...] = ()
    page: int | None = None
    rows: tuple[tuple[str, ...], ...] | None = None
    lang: str | None = None


@dataclass(slots=True)
class Parsed:
    """What a format parser returns: flat text, its blocks, what it had to drop or guess."""

    content: str
    blocks: list[Block]
    warnings: list[str] = field(default_factory=list)


class BlockBuilder:
    """Appends blocks to a flat text, tracking the heading path and the page.

    Blocks are separated by ``joiner`` (a blank line by default; consecutive
    list items by one line break). Each block's text goes into the flat text
    as given; its span is the text without surrounding whitespace. Blocks
    whose text is blank are skipped.
    """

    def __init__(self, joiner: str = "\n\n", item_joiner: str = "\n"):
        self.joiner, self.item_joiner = joiner, item_joiner
        self.parts: list[str] = []
        self.length = 0
        self.blocks: list[Block] = []
        self.headings: list[tuple[int, str]] = []
        self.page: int | None = None

    def _append(
        self,
        kind: str,
        text: str,
        *,
        level: int = 0,
        rows: tuple[tuple[str, ...], ...] | None = None,
        lang: str | None = None,
    ) -> Block | None:
        if not text.strip():
            return None
        if self.parts:
            last = self._last_kind()
            sep = self.item_joiner if kind == last and kind in (LIST_ITEM,) else self.joiner
            self.parts.append(sep)
            self.length += len(sep)
        kept = text.rstrip()
        kept = kept.lstrip("\n") if kind == CODE else kept.lstrip()  # code keeps its indent
        start = self.length + len(text.rstrip()) - len(kept)
        end = start + len(kept)
        self.parts.append(text)
        self.length += len(text)
        block = Block(
            kind,
            start,
            end,
            level=level,
            section=self.section(),
            page=self.page,
            rows=rows,
            lang=lang,
        )
        self.blocks.append(block)
        return block

    def _last_kind(self) -> str | None:
        for block in reversed(self.blocks):
            if block.kind != PAGE_BREAK:
                return block.kind
        return None

    def section(self) -> tuple[str, ...]:
        """The heading path at this point."""
        return tuple(text for _, text in self.headings)

    def heading(self, text: str, level: int) -> Block | None:
        """A heading; it closes every open heading of its level or deeper.

        The text goes into the flat text as given; the section path holds it
        with its whitespace collapsed.
        """
        clean = " ".join(text.split())
        if not clean:
            return None
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, clean))
        return self._append(HEADING, text, level=level)

    def paragraph(self, text: str) -> Block | None:
        return self._append(PARAGRAPH, text)

    def list_item(self, text: str, level: int = 1) -> Block | None:
        return self._append(LIST_ITEM, text, level=level)

    def quote(self, text: str) -> Block | None:
        return self._append(QUOTE, text)

    def code(self, text: str, lang: str | None = None) -> Block | None:
        return self._append(CODE, text.rstrip("\n"), lang=lang or None)

    def table(self, rows: Iterable[Iterable[str]]) -> Block | None:
        """A table: one line per row, cells joined by ``" | "``; empty rows dropped."""
        clean = tuple(tuple(" ".join(c.split()) for c in row) for row in rows)
        clean = tuple(row for row in clean if any(row))
        return self._append(TABLE, "\n".join(CELL_SEP.join(r) for r in clean), rows=clean)

    def page_break(self, page: int | None) -> None:
        """The next blocks are on ``page`` (``None``: a break whose number is unknown)."""
        self.page = page
        self.blocks.append(
            Block(PAGE_BREAK, self.length, self.length, page=page, section=self.section())
        )

    def build(self) -> Parsed:
        return Parsed("".join(self.parts), list(self.blocks))


def text_blocks(content: str) -> list[Block]:
    """Paragraphs of plain text: the runs between blank lines (offsets into ``content``)."""
    blocks, cursor = [], 0
    for m in [*re.finditer(r"\n[ \t\r\f\v]*\n", content), None]:
        end = m.start() if m else len(content)
        blocks.extend(_gap(content, cursor, end, None))
        cursor = m.end() if m else end
    return blocks


def usable_blocks(content: str, blocks: list[Block]) -> list[Block]:
    """``blocks`` made safe to chunk from: inside ``content``, in order, not overlapping, no gaps."""
    inside = [b for b in blocks if 0 <= b.start <= b.end <= len(content)]
    return fill_gaps(content, _ordered(inside))


def fill_gaps(content: str, blocks: list[Block]) -> list[Block]:
    """``blocks`` plus a paragraph for every non-blank stretch no block covers."""
    out: list[Block] = []
    cursor = 0
    context: Block | None = None
    for block in blocks:
        out.extend(_gap(content, cursor, block.start, context))
        out.append(block)
        cursor = max(cursor, block.end)
        context = block
    out.extend(_gap(content, cursor, len(content), context))
    return out


def _gap(content: str, start: int, end: int, context: Block | None) -> list[Block]:
    if start >= end or not content[start:end].strip():
        return []
    piece = content[start:end]
    lead, trail = len(piece) - len(piece.lstrip()), len(piece) - len(piece.rstrip())
    section = context.section if context else ()
    page = context.page if context else None
    return [Block(PARAGRAPH, start + lead, end - trail, section=section, page=page)]


def encode_blocks(blocks: list[Block] | None) -> BlocksRow | None:
    """The compact form kept in ``full_docs``: section paths listed once, one short list per block."""
    if not blocks:
        return None
    sections: dict[tuple[str, ...], int] = {}
    rows = []
    for b in blocks:
        sid = sections.setdefault(b.section, len(sections))
        row: list[str | int | None] = [_CODES[b.kind], b.start, b.end, b.level, sid, b.page]
        if b.lang:
            row.append(b.lang)
        rows.append(row)
    return {"v": FORMAT_VERSION, "sections": [list(s) for s in sections], "blocks": rows}


def decode_blocks(data: object, content: str) -> list[Block] | None:
    """Blocks from :func:`encode_blocks`' form; spans that do not fit ``content`` are dropped.

    A table's ``rows`` are read back from its text (cells split on ``" | "``).
    Returns ``None`` when ``data`` is missing or of an unknown version.
    """
    if not isinstance(data, dict) or data.get("v") != FORMAT_VERSION:
        return None
    try:
        sections = [tuple(str(h) for h in s) for s in data.get("sections", [])]
        out = [b for row in data.get("blocks", []) if (b := _decode_one(row, sections, content))]
    except (TypeError, ValueError, IndexError):
        return None
    return _ordered(out)


def _decode_one(row: list[Any], sections: list[tuple[str, ...]], content: str) -> Block | None:
    kind = _KIND_OF.get(row[0])
    start, end, level, sid, page = int(row[1]), int(row[2]), int(row[3]), int(row[4]), row[5]
    if kind is None or not 0 <= start <= end <= len(content):
        return None
    rows = None
    if kind == TABLE:
        rows = tuple(tuple(line.split(CELL_SEP)) for line in content[start:end].split("\n"))
    return Block(
        kind,
        start,
        end,
        level,
        sections[sid],
        None if page is None else int(page),
        rows,
        str(row[6]) if len(row) > 6 else None,
    )


def _ordered(blocks: list[Block]) -> list[Block]:
    """Blocks in text order, each starting where the previous one ended or later."""
    out: list[Block] = []
    cursor = 0
    for b in sorted(blocks, key=lambda b: (b.start, b.end)):
        if b.start >= cursor:
            out.append(b)
            cursor = max(cursor, b.end)
    return out
