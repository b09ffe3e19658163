"""DOCX through python-docx's element classes: headings by style, lists, tables, pages.

``word/document.xml`` is never held whole: :mod:`.docx_parts` streams it
from the bounded archive reader into a pull parser and hands over each
top-level paragraph or table as soon as it is complete, then drops it;
python-docx's ``Paragraph`` and ``Table`` read those elements exactly as
they would in a whole document. The text budget is checked run by run.

The flat text is the one the plain loader always produced (every
non-blank paragraph and table on its own line, cells joined by ``" | "``),
so documents indexed before blocks existed keep their content hash.

* Headings: paragraphs whose style (or a style it is based on) is
  ``Heading N`` (level N) or ``Title`` (level 0), or that carry an outline
  level of their own.
* List items: paragraphs with numbering (``w:numPr``, level from ``ilvl``)
  or a ``List ...`` style (level from a trailing digit: ``List Bullet 2``).
* Page breaks: where Word last laid the document out it leaves rendered
  page-break marks; when there are any, they number the pages. Otherwise
  hard page breaks (``w:br w:type="page"``, ``pageBreakBefore``) become
  page-break blocks without a number, since where Word breaks pages is not
  in the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from kgrag.errors import LoaderError
from kgrag.ingest.archive import Archive
from kgrag.ingest.blocks import BlockBuilder, Parsed
from kgrag.ingest.formats.docx_parts import (
    W_TBL,
    body_items,
    docx_parts,
    has_rendered_breaks,
    read_styles,
)
from kgrag.ingest.formats.tabular import Check

if TYPE_CHECKING:
    from docx.oxml.text.paragraph import CT_P
    from docx.styles.style import ParagraphStyle
    from docx.styles.styles import Styles
    from docx.table import Table
    from docx.text.pagebreak import RenderedPageBreak
    from docx.text.paragraph import Paragraph


class _XPath:
    """An XPath in python-docx's namespaces, compiled on first use, then reused.

    (python-docx's ``element.xpath()`` compiles its expression on every call:
    most of the time of a large file went there.)
    """

    def __init__(self, expression: str):
        self.expression = expression
        self.compiled: Callable[[object], list[object]] | None = None

    def __call__(self, el: object) -> list[object]:
        """What the expression selects under ``el`` (elements, or attribute values)."""
        if self.compiled is None:
            from docx.oxml.ns import nsmap
            from lxml import etree

            self.compiled = etree.XPath(self.expression, namespaces=nsmap)
        return self.compiled(el)

    def strings(self, el: object) -> list[str]:
        """The attribute values or texts the expression selects under ``el``."""
        return [str(found) for found in self(el)]


_OUTLINE = _XPath("./w:pPr/w:outlineLvl/@w:val")
_NUMBERING = _XPath("./w:pPr/w:numPr")
_LIST_LEVEL = _XPath("./w:ilvl/@w:val")  # of a numPr
_LIST_ID = _XPath("./w:numId")  # of a numPr
_HARD_BREAK = _XPath('./w:r/w:br[@w:type="page"] | ./w:pPr/w:pageBreakBefore')
_RUN_CONTENT = _XPath(
    "(w:r | w:hyperlink/w:r)/*[self::w:br or self::w:cr or self::w:noBreakHyphen"
    " or self::w:ptab or self::w:t or self::w:tab]"
)


def _style_heading(style: ParagraphStyle | None) -> int | None:
    """Heading level a style (or a style it is based on) gives: ``Heading N`` -> N, ``Title`` -> 0."""
    depth = 0
    while style is not None and depth < 5:
        name = (style.name or "").strip().lower()
        if name == "title":
            return 0
        if m := re.fullmatch(r"heading\s*(\d)", name):
            return int(m.group(1))
        style, depth = style.base_style, depth + 1
    return None


def _style_list(style: ParagraphStyle | None) -> int | None:
    """List depth a ``List ...`` style gives (``List Bullet 2`` -> 2)."""
    name = (style.name or "") if style is not None else ""
    if not name.lower().startswith("list"):
        return None
    m = re.search(r"(\d)$", name)
    return int(m.group(1)) if m else 1


class _Styles:
    """Heading and list levels per paragraph style, looked up once per style.

    (python-docx's ``paragraph.style`` scans every style of the document on
    each call, which made large files crawl.)
    """

    def __init__(self, styles: Styles):
        from docx.enum.style import WD_STYLE_TYPE

        # python-docx builds a ParagraphStyle for every style of the paragraph type
        self.by_id = {
            s.style_id: cast("ParagraphStyle", s)
            for s in styles
            if s.type == WD_STYLE_TYPE.PARAGRAPH
        }
        self.default = cast("ParagraphStyle | None", styles.default(WD_STYLE_TYPE.PARAGRAPH))
        self.cache: dict[str | None, tuple[int | None, int | None]] = {}

    def levels(self, p: CT_P) -> tuple[int | None, int | None]:
        """``(heading level, list depth)`` of a ``w:p`` element from its style alone."""
        sid = p.style
        if sid not in self.cache:
            style = self.by_id.get(sid, self.default) if sid else self.default
            self.cache[sid] = (_style_heading(style), _style_list(style))
        return self.cache[sid]


def heading_level(p: CT_P, styles: _Styles) -> int | None:
    """Heading level of a ``w:p`` from its style chain or outline level; ``None`` if body text."""
    level = styles.levels(p)[0]
    if level is not None:
        return level
    outline = _OUTLINE.strings(p)
    if outline and outline[0].isdigit() and int(outline[0]) < 9:
        return int(outline[0]) + 1
    return None


def list_level(p: CT_P, styles: _Styles) -> int | None:
    """List nesting depth (1 = top) of a ``w:p``; ``None`` if it is not a list item."""
    numbered = _NUMBERING(p)
    if numbered:
        ilvl = _LIST_LEVEL.strings(numbered[0])
        if _LIST_ID(numbered[0]):
            return int(ilvl[0]) + 1 if ilvl and ilvl[0].isdigit() else 1
    return styles.levels(p)[1]


def table_rows(table: Table) -> list[list[str]]:
    """Cells of each row; a merged cell once (python-docx repeats it across its span)."""
    rows = []
    for row in table.rows:
        cells, previous = [], None
        for cell in row.cells:
            if previous is not None and cell._tc is previous:
                continue
            previous = cell._tc
            cells.append(cell.text)
        rows.append(cells)
    return rows


def _hard_break(paragraph: Paragraph) -> bool:
    return bool(_HARD_BREAK(paragraph._p))


def _leading(rendered_break: RenderedPageBreak) -> bool:
    """No text before the break in its paragraph (python-docx gives no fragment then)."""
    fragment = rendered_break.preceding_paragraph_fragment
    return fragment is None or not fragment.text.strip()


class _Pages:
    """Page numbering from rendered breaks, or unnumbered hard breaks."""

    def __init__(self, rendered: bool, builder: BlockBuilder):
        self.b = builder
        self.rendered = rendered
        self.page = 1
        if self.rendered:
            builder.page_break(1)

    def before(self, paragraph: Paragraph) -> None:
        """A break at the start of ``paragraph`` (before any of its text)."""
        if self.rendered:
            breaks = paragraph.rendered_page_breaks
            if breaks and _leading(breaks[0]):
                self.page += 1
                self.b.page_break(self.page)

    def after(self, paragraph: Paragraph) -> None:
        """Breaks inside or at the end of ``paragraph``: the next block starts a new page."""
        if self.rendered:
            breaks = paragraph.rendered_page_breaks
            inner = len(breaks) - (1 if breaks and _leading(breaks[0]) else 0)
            if inner:
                self.page += inner
                self.b.page_break(self.page)
        elif _hard_break(paragraph):
            self.b.page_break(None)


def paragraph_text(p: CT_P) -> str:
    """``Paragraph.text`` of python-docx (runs and hyperlinks' runs), with compiled XPath."""
    return "".join(str(e) for e in _RUN_CONTENT(p))


def _paragraph(b: BlockBuilder, paragraph: Paragraph, styles: _Styles) -> None:
    text = paragraph_text(paragraph._p)
    if not text.strip():
        return
    level = heading_level(paragraph._p, styles)
    if level is not None:
        b.heading(text, level)
    elif (depth := list_level(paragraph._p, styles)) is not None:
        b.list_item(text, depth)
    else:
        b.paragraph(text)


def parse_docx(
    source: Archive | Path | bytes, name: str = "<docx>", check: Check | None = None
) -> Parsed:
    """Blocks and flat text of a .docx file, in document order.

    ``check(length)`` is called as the text grows, run by run (a size limit
    that raises stops the reading early).
    """
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    archive = Archive.of(source, name, ".docx")
    check = check or (lambda length: None)
    try:
        main, styles_part = docx_parts(archive)
        builder = BlockBuilder(joiner="\n")
        pages = _Pages(has_rendered_breaks(archive, main), builder)
        styles = _Styles(read_styles(archive, styles_part))
        for item in body_items(archive, main, lambda pending: check(builder.length + pending)):
            if item.tag == W_TBL:
                builder.table(table_rows(Table(item, None)))  # type: ignore[arg-type]
                continue
            paragraph = Paragraph(item, None)  # type: ignore[arg-type]
            pages.before(paragraph)
            _paragraph(builder, paragraph, styles)
            pages.after(paragraph)
    except LoaderError:
        raise
    except Exception as exc:  # lxml syntax errors, KeyError for a missing part, ...
        raise LoaderError(name, f"unreadable or corrupt .docx: {exc}") from exc
    return builder.build()
