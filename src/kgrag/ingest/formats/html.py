"""HTML: the page's main content (readability-lxml), walked into blocks with lxml.

readability-lxml scores the page's elements and keeps the main article,
dropping navigation, headers, footers, sidebars and cookie banners (see
docs/ingestion-structure.md for why it was chosen over trafilatura). The
kept fragment is walked in document order: ``h1``-``h6`` become headings,
``p`` paragraphs, ``li`` list items (nested lists one level deeper),
``table`` rows of cells, ``pre`` code, ``blockquote`` quotes; loose text in
containers becomes paragraphs. The page title opens the text as a level-1
heading when the content has no ``h1`` of its own.

Before readability runs, page furniture it sometimes keeps on short pages
is removed: ``nav``, ``aside``, ``footer``, a ``header`` outside the
article, elements whose ARIA role is navigation / banner / contentinfo /
complementary / search, and small elements whose id or class names a
cookie / consent / GDPR banner. When readability then finds nothing, the
rest of the body is used and a warning says so.
"""

from __future__ import annotations

import logging

from kgrag.ingest.blocks import BlockBuilder, Parsed
from kgrag.ingest.formats.element import Element, HtmlElement

_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_SKIP = {
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "head",
    "title",
    "meta",
    "link",
    "button",
    "iframe",
    "object",
}
_FURNITURE_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search"}
_BANNER_WORDS = ("cookie", "consent", "gdpr")
_INLINE = {
    "a",
    "abbr",
    "b",
    "bdi",
    "bdo",
    "cite",
    "code",
    "data",
    "dfn",
    "em",
    "i",
    "kbd",
    "mark",
    "q",
    "s",
    "samp",
    "small",
    "span",
    "strong",
    "sub",
    "sup",
    "time",
    "u",
    "var",
    "wbr",
    "font",
    "img",
    "label",
    "del",
    "ins",
    "tt",
    "big",
    "strike",
}


def _tag(el: Element) -> str:
    return el.tag.lower() if isinstance(el.tag, str) else ""


def inline_text(el: HtmlElement) -> str:
    """Text of ``el`` with ``<br>`` as a line break and runs of spaces collapsed per line."""
    parts: list[str] = []

    def visit(node: HtmlElement) -> None:
        tag = _tag(node)
        if tag == "br":
            parts.append("\n")
        elif tag and tag not in _SKIP:
            parts.append(node.text or "")
            for child in node:
                visit(child)
                parts.append(child.tail or "")

    visit(el)
    lines = ("".join(parts)).split("\n")
    return "\n".join(" ".join(line.split()) for line in lines).strip()


def _rows(table: HtmlElement) -> list[list[str]]:
    return [
        [inline_text(cell) for cell in tr if _tag(cell) in ("td", "th")] for tr in table.iter("tr")
    ]


class _Walker:
    """Blocks of an lxml element tree, in document order."""

    def __init__(self, builder: BlockBuilder):
        self.b = builder
        self.pending: list[str] = []
        self.lists = 0

    def flush(self) -> None:
        text = " ".join("".join(self.pending).split())
        self.pending = []
        if text:
            (self.b.list_item(text, self.lists) if self.lists else self.b.paragraph(text))

    def text(self, value: str | None) -> None:
        if value:
            self.pending.append(value)

    def walk(self, el: HtmlElement) -> None:
        tag = _tag(el)
        if not tag or tag in _SKIP:
            return
        if tag in _INLINE:
            self.text(inline_text(el))
            return
        self.flush()
        if not self._block(el, tag):
            self.text(el.text)
            for child in el:
                self.walk(child)
                self.text(child.tail)
        self.flush()

    def _block(self, el: HtmlElement, tag: str) -> bool:
        """Emit ``el`` if it is a leaf block; ``False`` for containers to walk into."""
        if tag in _HEADINGS:
            self.b.heading(inline_text(el), _HEADINGS[tag])
        elif tag == "p":
            (
                self.b.list_item(inline_text(el), self.lists)
                if self.lists
                else self.b.paragraph(inline_text(el))
            )
        elif tag == "pre":
            self.b.code(el.text_content())
        elif tag == "blockquote":
            self.b.quote(inline_text(el))
        elif tag == "table":
            self.b.table(_rows(el))
        elif tag in ("ul", "ol"):
            self.lists += 1
            for child in el:
                self.walk(child)
                self.text(child.tail)
            self.flush()
            self.lists -= 1
        else:
            return False
        return True


def _page(markup: str) -> HtmlElement | None:
    import lxml.html
    from lxml.etree import ParserError

    try:
        page: HtmlElement = lxml.html.document_fromstring(markup)
        return page
    except (ParserError, ValueError):
        return None


def _banner(el: HtmlElement) -> bool:
    """A cookie / consent banner: a small element named so in its id or class."""
    names = f"{el.get('id', '')} {el.get('class', '')}".lower()
    return (
        _tag(el) not in ("html", "body")
        and any(w in names for w in _BANNER_WORDS)
        and len(el.text_content()) < 3000
    )


def _preclean(page: HtmlElement) -> None:
    """Drop page furniture readability sometimes keeps on short pages (in place)."""
    doomed = []
    for el in page.iter():
        tag, role = _tag(el), (el.get("role") or "").lower()
        if (
            tag in ("nav", "aside", "footer")
            or role in _FURNITURE_ROLES
            or _banner(el)
            or (
                tag == "header"
                and not any(_tag(a) in ("article", "main") for a in el.iterancestors())
            )
        ):
            doomed.append(el)
    for el in doomed:
        if el.getparent() is not None:
            el.drop_tree()


def _main_content(page: HtmlElement) -> HtmlElement | None:
    """readability's main-content fragment, or ``None`` when it finds nothing."""
    import lxml.html
    from readability import Document as Readable

    logging.getLogger("readability.readability").setLevel(logging.ERROR)
    try:
        fragment: HtmlElement = lxml.html.fragment_fromstring(
            Readable(page).summary(html_partial=True), create_parent="div"
        )
    except Exception:
        return None
    return fragment if fragment.text_content().strip() else None


def _title(page: HtmlElement | None) -> str:
    found = page.find(".//title") if page is not None else None
    full = " ".join((found.text_content() if found is not None else "").split())
    for sep in (" | ", " - ", " – ", " — ", " :: "):
        if sep in full:
            return full.split(sep)[0].strip()
    return full


def _body(page: HtmlElement) -> HtmlElement:
    body = page.find(".//body")
    return body if body is not None else page


def parse_html(markup: str) -> Parsed:
    """Blocks and flat text of an HTML page's main content."""
    page, warnings = _page(markup), []
    title = _title(page)
    main = None
    if page is not None:
        _preclean(page)
        main = _main_content(page)
        if main is None:
            main = _body(page)
            warnings.append(
                "HTML: readability found no main content; kept the page's "
                "text without navigation, header, footer and banners"
            )
    builder = BlockBuilder()
    if title and (main is None or main.find(".//h1") is None):
        builder.heading(title, 1)
    if main is not None:
        _Walker(builder).walk(main)
    parsed = builder.build()
    parsed.warnings = warnings
    return parsed
