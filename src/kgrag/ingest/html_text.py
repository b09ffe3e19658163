"""Visible text of an HTML page, with the standard library's parser.

Script, style and similar non-content elements are dropped; block-level
elements (paragraphs, headings, list items, table rows, ``<br>``) end a
line so the text keeps the page's structure. Runs of spaces collapse and
at most one blank line separates blocks.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_SKIP = {"script", "style", "noscript", "template", "svg"}
_BLOCK = {
    "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt",
    "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4",
    "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section",
    "table", "tbody", "thead", "tfoot", "title", "tr", "ul",
}
_PARAGRAPH = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "title", "table", "ul", "ol"}
_CELL = {"td", "th"}
_LINE, _PARA = "\x1e", "\x1d"  # soft (line) and hard (blank line) breaks


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip_depth = 0

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in _SKIP:
            self._skip_depth += 1
        elif tag in _BLOCK:
            self.parts.append(_LINE)
        elif tag in _CELL:
            self.parts.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif tag in _BLOCK:
            self.parts.append(_PARA if tag in _PARAGRAPH else _LINE)

    def handle_data(self, data: str) -> None:
        if not self._skip_depth:
            self.parts.append(data)


def html_to_text(markup: str) -> str:
    """The readable text of ``markup``."""
    collector = _TextCollector()
    collector.feed(markup)
    collector.close()
    raw = "".join(collector.parts).replace("\n", " ")
    out: list[str] = []
    for piece in re.split(f"([{_LINE}{_PARA}]+)", raw):
        if piece and piece[0] in (_LINE, _PARA):
            brk = "\n\n" if _PARA in piece else "\n"
            if out and out[-1] in ("\n", "\n\n"):
                out[-1] = max(out[-1], brk)
            elif out:
                out.append(brk)
            continue
        line = re.sub(r"^\|\s*", "", " ".join(piece.split()))
        if line:
            if out and out[-1] not in ("\n", "\n\n"):
                out.append(" ")
            out.append(line)
    return "".join(out).strip()
