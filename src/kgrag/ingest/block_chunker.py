"""Chunk a document along its blocks (headings, paragraphs, tables, code ...).

The blocks are cut into *units* that are never split further: a heading
whole, prose (paragraphs, list items, quotes) by sentence, tables by row,
code by line; a unit longer than ``size`` tokens is cut into token-sized
pieces at spaces where possible. Units are packed greedily into chunks of
at most ``size`` tokens (counted on the chunk's real text). When a chunk
must end, the cut goes, among the places that keep it at least half full:

1. before a heading (the highest-level one; the last of equals),
2. else at the last block boundary,
3. else after the last unit that fits (inside a block, at a sentence or
   row boundary).

A chunk never ends on a heading that introduces the next chunk's text.

Overlap: the next chunk starts again with the previous chunk's trailing
units, as many as fit in ``overlap`` tokens (whole units only, so possibly
none), except after a cut before a heading (a new section needs no
carry-over). A chunk's text is always ``content[start:end]``: the overlap
is part of that span, never a prefix added to it.

Each chunk's ``location`` is ``{"section": [...], "pages": [first, last] |
None, "start": int, "end": int}`` plus ``"kind": "code"`` when the chunk is
code only (the indexer skips entity extraction for those). ``section`` is
the heading path of the chunk's first unit after its overlap (skipping the
headings it opens with, so a chunk starting "3 Terms / 3.2 Licensing /
text" is in 3.2).

:func:`locate_chunks` gives chunks made by the other chunkers the same
location, finding their text in the document.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from kgrag.errors import ConfigError
from kgrag.ingest.blocks import (
    CODE,
    HEADING,
    LIST_ITEM,
    PAGE_BREAK,
    PARAGRAPH,
    QUOTE,
    TABLE,
    Block,
    usable_blocks,
)
from kgrag.ingest.ids import unique_chunks
from kgrag.llm.tokenizer import Tokenizer
from kgrag.types import Chunk, Document

_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*(?=\s)|[。！？；]")
_LINE_END = re.compile(r"\n")
_SPLIT_BY = {
    PARAGRAPH: _SENTENCE_END,
    LIST_ITEM: _SENTENCE_END,
    QUOTE: _SENTENCE_END,
    TABLE: _LINE_END,
    CODE: _LINE_END,
}


@dataclass(slots=True, frozen=True)
class Unit:
    """An unsplittable span ``[start, end)``; ``first``: a block starts with it."""

    start: int
    end: int
    tokens: int
    block: int
    first: bool


@dataclass(slots=True, frozen=True)
class BlockPiece:
    """One chunk before it is tied to a document: ``content == text[start:end]``."""

    content: str
    tokens: int
    order: int
    start: int
    end: int
    location: dict[str, object]


def _trim(content: str, a: int, b: int) -> tuple[int, int] | None:
    while a < b and content[a].isspace():
        a += 1
    while b > a and content[b - 1].isspace():
        b -= 1
    return (a, b) if a < b else None


def _split_at(
    content: str, start: int, end: int, pattern: re.Pattern[str]
) -> list[tuple[int, int]]:
    """Stripped spans of ``content[start:end]`` cut after each match of ``pattern``."""
    spans, cursor = [], start
    for m in pattern.finditer(content, start, end):
        if (span := _trim(content, cursor, m.end())) is not None:
            spans.append(span)
        cursor = m.end()
    if (span := _trim(content, cursor, end)) is not None:
        spans.append(span)
    return spans


def _fit(content: str, a: int, b: int, tok: Tokenizer, size: int) -> int:
    """The largest ``e`` in ``(a, b]`` whose ``content[a:e]`` has at most ``size`` tokens."""
    lo, hi = a + 1, b
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if tok.count(content[a:mid]) <= size:
            lo = mid
        else:
            hi = mid - 1
    return lo


def token_spans(
    content: str, a: int, b: int, tok: Tokenizer, size: int
) -> list[tuple[int, int, int]]:
    """``content[a:b]`` in stripped pieces ``(start, end, tokens)`` of at most ``size`` tokens.

    Cut at the last space or line break of the first half-full stretch when
    there is one, else exactly where the tokens run out.
    """
    out: list[tuple[int, int, int]] = []
    while (span := _trim(content, a, b)) is not None:
        a, b = span
        if (n := tok.count(content[a:b])) <= size:
            out.append((a, b, n))
            break
        cut = _fit(content, a, b, tok, size)
        space = max(content.rfind(" ", a, cut), content.rfind("\n", a, cut))
        if space > a + (cut - a) // 2:
            cut = space
        if (piece := _trim(content, a, cut)) is not None:
            out.append((*piece, tok.count(content[piece[0] : piece[1]])))
        a = cut
    return out


def units(content: str, blocks: list[Block], tok: Tokenizer, size: int) -> list[Unit]:
    """The units of every block, in order (page breaks have none)."""
    out: list[Unit] = []
    for index, block in enumerate(blocks):
        if block.kind == PAGE_BREAK or block.start >= block.end:
            continue
        pattern = _SPLIT_BY.get(block.kind)  # headings stay whole
        spans = (
            [(block.start, block.end)]
            if pattern is None
            else _split_at(content, block.start, block.end, pattern)
        )
        first = True
        for a, b in spans:
            for x, y, n in token_spans(content, a, b, tok, size):
                out.append(Unit(x, y, n, index, first))
                first = False
    return out


class _Packer:
    """Greedy packing of units into chunks (see the module docstring)."""

    def __init__(
        self,
        content: str,
        blocks: list[Block],
        us: list[Unit],
        tok: Tokenizer,
        size: int,
        overlap: int,
    ):
        self.content, self.blocks, self.units, self.tok = content, blocks, us, tok
        self.size, self.overlap = size, overlap
        self.prefix = [0]  # tokens of the units before, each with the gap before it
        for k, u in enumerate(us):
            gap = 0 if k == 0 or content[us[k - 1].end : u.start] == " " else 1
            self.prefix.append(self.prefix[-1] + gap + u.tokens)

    def est(self, i: int, j: int) -> int:
        """Estimated tokens of units ``i..j-1`` together (a space joins for free, other gaps cost 1)."""
        gap = 0 if i == 0 or self.content[self.units[i - 1].end : self.units[i].start] == " " else 1
        return self.prefix[j] - self.prefix[i] - gap

    def real(self, i: int, j: int) -> int:
        return self.tok.count(self.content[self.units[i].start : self.units[j - 1].end])

    def heading_level(self, c: int) -> int | None:
        """Level of the heading unit ``c`` starts, if it starts one."""
        u = self.units[c]
        block = self.blocks[u.block]
        return block.level if u.first and block.kind == HEADING else None

    def ends_heading(self, c: int) -> bool:
        """Whether unit ``c - 1`` is a heading's (last) unit."""
        return self.blocks[self.units[c - 1].block].kind == HEADING

    def pack(self) -> list[tuple[int, int, int]]:
        """``(first unit, first unit after the overlap, end)`` of every chunk."""
        n, out = len(self.units), []
        i = own = 0
        while own < n:
            j = own + 1
            while j < n and self.est(i, j + 1) <= self.size:
                j += 1
            while j < n and self.real(i, j + 1) <= self.size:  # estimates err high
                j += 1
            if j < n:
                j = self.best_cut(i, own, j)
            while j > own + 1 and self.real(i, j) > self.size:
                j -= 1
            while i < own and self.real(i, j) > self.size:
                i += 1
            out.append((i, own, j))
            i, own = self.next_start(i, j), j
        return out

    def best_cut(self, i: int, own: int, j: int) -> int:
        """Where a chunk of units from ``i`` that can reach ``j`` should end."""
        best, best_key = j, (3, 0, 0)
        for c in range(own + 1, j + 1):
            if c < j and 2 * self.est(i, c) < self.size:
                continue
            if self.ends_heading(c):  # a heading stays with the text it introduces
                continue
            level = self.heading_level(c) if c < len(self.units) else None
            if level is not None:
                key = (0, level, -c)
            elif c == len(self.units) or self.units[c].first:
                key = (1, 0, -c)
            else:
                key = (2, 0, -c) if c == j else (3, 0, 0)
            if key < best_key:
                best, best_key = c, key
        return best

    def next_start(self, i: int, j: int) -> int:
        """First unit of the chunk after ``units[i:j]``: the overlap it carries over."""
        if self.overlap <= 0 or j >= len(self.units) or self.heading_level(j) is not None:
            return j
        k = j
        while k - 1 > i and self.est(k - 1, j) <= self.overlap:
            k -= 1
        while k < j and (self.est(k, j + 1) > self.size or self.real(k, j) > self.overlap):
            k += 1
        return k


class _Locator:
    """Section path, pages and kind of any span of the text."""

    def __init__(self, blocks: list[Block]):
        self.blocks = blocks
        self.starts = [b.start for b in blocks]
        self.ends = [b.end for b in blocks]

    def location(self, start: int, end: int, anchor: int) -> dict[str, object]:
        lo, hi = bisect.bisect_right(self.ends, start), bisect.bisect_left(self.starts, end)
        inside = [b for b in self.blocks[lo:hi] if b.kind != PAGE_BREAK]
        k = bisect.bisect_right(self.starts, anchor) - 1
        section = self.blocks[k].section if k >= 0 else (inside[0].section if inside else ())
        pages = [b.page for b in inside if b.page is not None]
        loc: dict[str, object] = {
            "section": list(section),
            "pages": [min(pages), max(pages)] if pages else None,
            "start": start,
            "end": end,
        }
        if inside and all(b.kind == CODE for b in inside):
            loc["kind"] = "code"
        return loc


def _check(size: int, overlap: int) -> None:
    if size < 1 or not 0 <= overlap < size:
        raise ConfigError(f"need chunk size >= 1 and 0 <= overlap < size, got {size}/{overlap}")


def chunk_blocks(
    content: str, blocks: list[Block], tokenizer: Tokenizer, size: int = 1200, overlap: int = 100
) -> list[BlockPiece]:
    """Chunks of ``content`` along ``blocks`` (text no block covers is chunked as paragraphs)."""
    _check(size, overlap)
    safe = usable_blocks(content, blocks)
    us = units(content, safe, tokenizer, size)
    locator = _Locator(safe)
    pieces = []
    for order, (i, own, j) in enumerate(
        _Packer(content, safe, us, tokenizer, size, overlap).pack()
    ):
        start, end = us[i].start, us[j - 1].end
        text = content[start:end]
        anchor = next((u for u in us[own:j] if safe[u.block].kind != HEADING), us[own])
        pieces.append(
            BlockPiece(
                text,
                tokenizer.count(text),
                order,
                start,
                end,
                locator.location(start, end, anchor.start),
            )
        )
    return pieces


def make_block_chunks(
    doc: Document, tokenizer: Tokenizer, *, size: int = 1200, overlap: int = 100
) -> list[Chunk]:
    """:class:`Chunk` records of a document that has blocks (a repeated text is kept once)."""
    pieces = chunk_blocks(doc.content, doc.blocks or [], tokenizer, size, overlap)
    return unique_chunks(doc.id, doc.file_path, ((p.content, p.tokens, p.location) for p in pieces))


def locate_chunks(chunks: list[Chunk], content: str, blocks: list[Block]) -> None:
    """Fill the ``location`` of chunks cut by another chunker (their text is found in ``content``)."""
    locator = _Locator(usable_blocks(content, blocks))
    cursor = -1
    for chunk in chunks:
        start = content.find(chunk.content, cursor + 1)
        if start < 0:
            start = content.find(chunk.content)
        if start < 0:
            continue
        cursor = start
        chunk.location = locator.location(start, start + len(chunk.content), start)
