"""Visible text of an HTML page, with the standard library's parser.

Script, style and similar non-content elements are dropped; block-level
elements (paragraphs, headings, list items, table rows, ``<br>``) end a
line so the text keeps the page's structure. Runs of spaces collapse and
at most one blank line separates blocks.

:func:`declared_charset` finds the charset a page declares (``<meta
charset>``, ``<meta http-equiv="Content-Type">`` or an XML declaration) so
the loader can honour it before guessing.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_SKIP = {"script", "style", "noscript", "template", "svg"}
_BLOCK = {
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "dd",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "tbody",
    "thead",
    "tfoot",
    "title",
    "tr",
    "ul",
}
_PARAGRAPH = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "title", "table", "ul", "ol"}
_CELL = {"td", "th"}
_LINE, _PARA = "\x1e", "\x1d"  # soft (line) and hard (blank line) breaks

PRESCAN_BYTES = 4096  # where a declaration is looked for (the HTML standard says 1024)
_META = re.compile(
    rb"""<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)"""  # also content="...; charset=x"
    rb"""|<\?xml\b[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)""",
    re.IGNORECASE,
)
# Labels the WHATWG encoding standard reads as something wider (what browsers do).
_LABELS = {
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "l1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "windows-1252": "cp1252",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "windows-31j": "cp932",
    "euc-kr": "cp949",
    "ks_c_5601-1987": "cp949",
    # a page whose declaration can be read as ASCII is not UTF-16
    "utf-16": "utf-8",
    "utf-16le": "utf-8",
    "utf-16be": "utf-8",
}


def declared_charset(data: bytes) -> str | None:
    """The charset the first :data:`PRESCAN_BYTES` of a page declare, or ``None``.

    The label is returned as a Python codec name where the WHATWG standard
    maps it to a wider encoding (``iso-8859-1`` -> ``cp1252``); an unknown
    label is returned as written, for the caller to report.
    """
    found = _META.search(data[:PRESCAN_BYTES])
    if found is None:
        return None
    label = (found.group(1) or found.group(2)).decode("ascii").strip().lower()
    return _LABELS.get(label, label)


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
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
