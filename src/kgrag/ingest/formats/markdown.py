"""Markdown through markdown-it-py (CommonMark with GFM tables).

The flat text keeps what a reader sees: emphasis, links and images are
reduced to their text, list markers and heading marks are dropped, table
rows become ``cell | cell`` lines, fenced and indented code is kept
verbatim as code blocks. Raw HTML blocks contribute their visible text.
YAML front matter (``---`` ... ``---`` at the very top) is kept as a code
block, searchable but not prose.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kgrag.ingest.blocks import BlockBuilder, Parsed
from kgrag.ingest.formats.element import HtmlElement

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)


def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def inline_text(token: Token) -> str:
    """The visible text of an inline token: markup dropped, breaks kept as line breaks."""
    out: list[str] = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            out.append("\n")
        elif child.type == "image":
            out.append(inline_text(child))
    return "".join(out)


def _html_text(markup: str) -> str:
    import lxml.html
    from lxml.etree import ParserError

    try:
        root: HtmlElement = lxml.html.fragment_fromstring(markup, create_parent="div")
        return root.text_content()
    except (ParserError, ValueError):
        return ""


class _Walker:
    """Turns markdown-it's token stream into blocks."""

    def __init__(self) -> None:
        self.b = BlockBuilder()
        self.lists = 0  # list nesting depth
        self.quotes = 0
        self.heading: int | None = None
        self.rows: list[list[str]] | None = None

    def feed(self, tokens: list[Token]) -> None:
        for t in tokens:
            handler = getattr(self, "on_" + t.type, None)
            if handler is not None:
                handler(t)

    def on_heading_open(self, t: Token) -> None:
        self.heading = int(t.tag[1])

    def on_heading_close(self, t: Token) -> None:
        self.heading = None

    def on_bullet_list_open(self, t: Token) -> None:
        self.lists += 1

    def on_bullet_list_close(self, t: Token) -> None:
        self.lists -= 1

    on_ordered_list_open, on_ordered_list_close = on_bullet_list_open, on_bullet_list_close

    def on_blockquote_open(self, t: Token) -> None:
        self.quotes += 1

    def on_blockquote_close(self, t: Token) -> None:
        self.quotes -= 1

    def on_table_open(self, t: Token) -> None:
        self.rows = []

    def on_tr_open(self, t: Token) -> None:
        if self.rows is not None:
            self.rows.append([])

    def on_table_close(self, t: Token) -> None:
        self.b.table(self.rows or [])
        self.rows = None

    def on_inline(self, t: Token) -> None:
        text = inline_text(t)
        if self.rows is not None:
            if self.rows:
                self.rows[-1].append(text)
        elif self.heading is not None and not self.quotes:
            self.b.heading(text, self.heading)
        elif self.quotes:
            self.b.quote(text)
        elif self.lists:
            self.b.list_item(text, self.lists)
        else:
            self.b.paragraph(text)

    def on_fence(self, t: Token) -> None:
        self.b.code(t.content, (t.info or "").split()[0] if (t.info or "").strip() else None)

    def on_code_block(self, t: Token) -> None:
        self.b.code(t.content)

    def on_html_block(self, t: Token) -> None:
        self.b.paragraph(_html_text(t.content))


def parse_markdown(text: str) -> Parsed:
    """Blocks and flat text of a Markdown document."""
    walker = _Walker()
    front = _FRONT_MATTER.match(text)
    if front:
        walker.b.code(front.group(1), "yaml")
        text = text[front.end() :]
    walker.feed(_parser().parse(text))
    return walker.b.build()
