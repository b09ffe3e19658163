"""One EPUB chapter's XHTML into blocks, under a level-1 chapter heading.

The chapter is parsed with lxml's HTML parser (forgiving about entities
such as ``&nbsp;`` that XHTML files use without their DTD) and its body
walked by the HTML block walker of :mod:`.html`, without readability: a
chapter has no navigation or footer to drop.
"""

from __future__ import annotations

import re

from kgrag.ingest.blocks import BlockBuilder
from kgrag.ingest.encoding import decode_bytes
from kgrag.ingest.formats.element import HtmlElement
from kgrag.ingest.formats.html import _Walker, inline_text
from kgrag.ingest.html_text import declared_charset

_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


def chapter_body(data: bytes) -> HtmlElement | None:
    """The ``body`` element of a chapter file, or ``None`` when it holds no text (a cover)."""
    import lxml.html

    text = _DECLARATION.sub("", decode_bytes(data, declared=declared_charset(data)).text, 1)
    if not text.strip():
        return None
    page: HtmlElement = lxml.html.document_fromstring(text)
    body = page.find(".//body")
    body = page if body is None else body
    return body if body.text_content().strip() else None


def same_title(a: str, b: str) -> bool:
    """One title repeats the other, numbering aside (``1. The Foundry`` and ``The Foundry``)."""
    a, b = " ".join(a.split()).casefold(), " ".join(b.split()).casefold()
    return bool(a and b) and (a.endswith(b) or b.endswith(a))


def _demote(body: HtmlElement) -> None:
    """Headings one level deeper (``h1`` -> ``h2``; ``h6`` stays), in place."""
    for el in list(body.iter(*_HEADINGS[:-1])):
        el.tag = f"h{int(str(el.tag)[1]) + 1}"


def walk_chapter(builder: BlockBuilder, body: HtmlElement, title: str | None, number: int) -> None:
    """A level-1 heading (``title``, else the first heading, else ``Chapter N``), then the body."""
    first = next(body.iter(*_HEADINGS), None)
    first_text = inline_text(first) if first is not None else ""
    heading = title or first_text or f"Chapter {number}"
    if first is not None and same_title(first_text, heading):
        first.drop_tree()  # its tail text stays
    _demote(body)
    builder.heading(heading, 1)
    _Walker(builder).walk(body)
