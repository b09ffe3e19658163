"""ODT (OpenDocument text) with zipfile and lxml: ``content.xml`` walked into blocks.

No ODF library is used; ``content.xml`` is inflated through the bounded
archive reader (:mod:`kgrag.ingest.archive`) into a :mod:`.safe_xml` pull
parser, and each child of the body is walked once complete, then dropped.

* ``text:h`` -> heading (``text:outline-level``, 1 when absent);
  ``text:p`` -> paragraph; ``text:list`` -> list items (nested lists one
  level deeper); ``table:table`` -> table rows (header rows included,
  covered cells of a merge left out); ``text:section`` and other
  containers are walked into; the generated table of contents and other
  indexes are skipped (they repeat the headings).
* Inside a paragraph: spans and links give their text, ``text:s`` its
  spaces, ``text:tab`` a tab, ``text:line-break`` a line break. Footnote
  and endnote bodies become paragraphs right after the paragraph citing
  them; drawings and frames are skipped.
* Pages: when LibreOffice saved its layout (``text:soft-page-break``
  marks) the marks number the pages, as rendered page breaks do for
  .docx; otherwise pages are unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from kgrag.errors import LoaderError
from kgrag.ingest.archive import Archive, has_mark
from kgrag.ingest.blocks import BlockBuilder, Parsed
from kgrag.ingest.formats.element import Element
from kgrag.ingest.formats.safe_xml import local, pull_parser
from kgrag.ingest.formats.tabular import Check

TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_SOFT_BREAK = re.compile(rb"<(?:[\w.-]+:)?soft-page-break[\s/>]")
_ROW_GROUPS = ("table-header-rows", "table-rows", "table-row-group")
_SKIP = {
    "annotation",
    "table-of-content",
    "alphabetical-index",
    "illustration-index",
    "table-index",
    "object-index",
    "user-index",
    "bibliography",
    "sequence-decls",
    "tracked-changes",
    "forms",
    "variable-decls",
    "user-field-decls",
    "frame",
    "custom-shape",
}


def _spaces(el: Element) -> str:
    count = el.get(f"{TEXT}c", "1")
    return " " * (int(count) if count.isdigit() else 1)


def inline_text(el: Element, notes: list[Element]) -> str:
    """Text of a paragraph-like element; note bodies go to ``notes`` instead."""
    parts = [el.text or ""]
    for child in el:
        name = local(child.tag)
        if name == "s":
            parts.append(_spaces(child))
        elif name == "tab":
            parts.append("\t")
        elif name == "line-break":
            parts.append("\n")
        elif name == "note":
            notes.extend(b for b in child.iter() if local(b.tag) == "note-body")
        elif name and name not in _SKIP and name != "soft-page-break":
            parts.append(inline_text(child, notes))
        parts.append(child.tail or "")
    return "".join(parts)


class _Walker:
    """Blocks of an ``office:text`` element, in document order."""

    def __init__(self, builder: BlockBuilder, paged: bool):
        self.b, self.paged, self.page, self.lists = builder, paged, 1, 0
        if paged:
            builder.page_break(1)

    def walk(self, el: Element) -> None:
        for child in el:
            self.item(child)

    def item(self, child: Element) -> None:
        """One element of a container, in order."""
        name = local(child.tag)
        if name == "soft-page-break":
            self._next_page()
        elif name in ("h", "p"):
            self._text_block(child, name)
        elif name == "list":
            self.lists += 1
            self.walk(child)
            self.lists -= 1
        elif name == "table":
            self.b.table(table_rows(child))
            self._pages_inside(child)
        elif name and name not in _SKIP:
            self.walk(child)  # section, list-item, list-header, ...

    def _text_block(self, el: Element, name: str) -> None:
        notes: list[Element] = []
        text = inline_text(el, notes)
        if name == "h":
            level = el.get(f"{TEXT}outline-level", "1")
            self.b.heading(text, int(level) if level.isdigit() else 1)
        elif self.lists:
            self.b.list_item(text, self.lists)
        else:
            self.b.paragraph(text)
        for note in notes:
            self.walk(note)
        self._pages_inside(el)

    def _pages_inside(self, el: Element) -> None:
        """Page marks inside a block: the next block starts on a later page."""
        for mark in el.iter():
            if local(mark.tag) == "soft-page-break":
                self._next_page()

    def _next_page(self) -> None:
        if self.paged:
            self.page += 1
            self.b.page_break(self.page)


def _cell_text(cell: Element) -> str:
    return " ".join(inline_text(p, []) for p in cell.iter() if local(p.tag) in ("p", "h"))


def table_rows(table: Element) -> list[list[str]]:
    """Cells per row of a ``table:table`` (header rows and row groups included)."""
    rows = []
    for child in table:
        name = local(child.tag)
        if name == "table-row":
            rows.append([_cell_text(c) for c in child if local(c.tag) == "table-cell"])
        elif name in _ROW_GROUPS:
            rows.extend(table_rows(child))
    return rows


def _is_office_text(el: Element) -> bool:
    parent = el.getparent()
    return local(el.tag) == "text" and parent is not None and local(parent.tag) == "body"


def _stream(archive: Archive, walker: _Walker, check: Check) -> None:
    """Walk each child of ``office:text`` as soon as it is complete, then drop it.

    Text is counted element by element as it arrives, so ``check`` stops
    a huge block midway.
    """
    parser = pull_parser(events=("end",))
    pending, found = 0, False
    for piece in _then_none(archive):
        if piece is None:
            parser.close()
        else:
            parser.feed(piece)
        for _, el in parser.read_events():
            parent = el.getparent()
            if parent is None or not _is_office_text(parent):
                found = found or _is_office_text(el)
                pending += len(el.text or "") + len(el.tail or "")
                check(walker.b.length + pending)
                continue
            walker.item(el)
            pending = 0
            check(walker.b.length)
            el.clear(keep_tail=True)
            while el.getprevious() is not None:
                del parent[0]
    if not found:
        raise ValueError("content.xml has no office:text body (not a text document)")


def _then_none(archive: Archive) -> Iterator[bytes | None]:
    yield from archive.chunks("content.xml")
    yield None


def parse_odt(source: Archive | Path, name: str = "<odt>", check: Check | None = None) -> Parsed:
    """Blocks and flat text of an OpenDocument text file.

    ``content.xml`` streams from the bounded archive reader: one top-level
    block in memory at a time, ``check(length)`` called as text arrives.
    """
    archive = Archive.of(source, name, ".odt")
    builder = BlockBuilder()
    try:
        paged = has_mark(archive, "content.xml", _SOFT_BREAK)
        _stream(archive, _Walker(builder, paged), check or (lambda length: None))
    except LoaderError:
        raise
    except Exception as exc:  # lxml syntax errors, KeyError for a missing part, ...
        raise LoaderError(name, f"unreadable or corrupt .odt: {exc}") from exc
    return builder.build()
