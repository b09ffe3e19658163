"""ODT (OpenDocument text) with zipfile and lxml: ``content.xml`` walked into blocks.

No ODF library is used; the body of ``content.xml`` is read with
:mod:`.safe_xml` once the archive has passed the zip budgets.

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

import zipfile
from pathlib import Path
from typing import Any

from kgrag.errors import LoaderError
from kgrag.ingest.blocks import BlockBuilder, Parsed
from kgrag.ingest.formats.safe_xml import local, parse_xml
from kgrag.ingest.formats.tabular import Check

TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
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


def _spaces(el: Any) -> str:
    count = el.get(f"{TEXT}c", "1")
    return " " * (int(count) if count.isdigit() else 1)


def inline_text(el: Any, notes: list[Any]) -> str:
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

    def walk(self, el: Any) -> None:
        for child in el:
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

    def _text_block(self, el: Any, name: str) -> None:
        notes: list[Any] = []
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

    def _pages_inside(self, el: Any) -> None:
        """Page marks inside a block: the next block starts on a later page."""
        for mark in el.iter():
            if local(mark.tag) == "soft-page-break":
                self._next_page()

    def _next_page(self) -> None:
        if self.paged:
            self.page += 1
            self.b.page_break(self.page)


def _cell_text(cell: Any) -> str:
    return " ".join(inline_text(p, []) for p in cell.iter() if local(p.tag) in ("p", "h"))


def table_rows(table: Any) -> list[list[str]]:
    """Cells per row of a ``table:table`` (header rows and row groups included)."""
    rows = []
    for child in table:
        name = local(child.tag)
        if name == "table-row":
            rows.append([_cell_text(c) for c in child if local(c.tag) == "table-cell"])
        elif name in _ROW_GROUPS:
            rows.extend(table_rows(child))
    return rows


def _office_text(root: Any) -> Any:
    for el in root.iter():
        if (
            local(el.tag) == "text"
            and el.getparent() is not None
            and local(el.getparent().tag) == "body"
        ):
            return el
    raise ValueError("content.xml has no office:text body (not a text document)")


def parse_odt(source: Path, name: str = "<odt>", check: Check | None = None) -> Parsed:
    """Blocks and flat text of an OpenDocument text file."""
    try:
        with zipfile.ZipFile(source) as archive:
            root = parse_xml(archive.read("content.xml"))
        body = _office_text(root)
    except Exception as exc:  # zipfile, lxml syntax errors, KeyError for a missing part
        raise LoaderError(name, f"unreadable or corrupt .odt: {exc}") from exc
    paged = any(local(el.tag) == "soft-page-break" for el in body.iter())
    builder = BlockBuilder()
    _Walker(builder, paged).walk(body)
    if check is not None:
        check(builder.length)
    return builder.build()
