"""PDF through pypdf: text per page, page furniture dropped, lines reflowed.

* Every page starts with a page-break block carrying its 1-based physical
  page number (what a viewer's "go to page" takes), so each block knows
  its page.
* Running headers and footers are found by repetition: a line at one of
  the first or last three places of a page (counting non-blank lines) that
  recurs at the same place, digits ignored (``Page 3 of 9`` matches ``Page
  4 of 9``), on at least half the pages, and on at least two, of a document
  of three pages or more is dropped there. Bare page numbers go the same way.
* Lines are joined into paragraphs: a blank line ends one, and so does a
  line that ends a sentence while being clearly shorter than the page's
  full lines. A word hyphenated across a line break (``coun-`` / ``ting``,
  next line lowercase) is joined without its hyphen.
"""

from __future__ import annotations

import io
import math
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from kgrag.errors import LoaderError
from kgrag.ingest.blocks import BlockBuilder, Parsed

EDGE_LINES = 3  # lines at the top and bottom of a page that may be furniture
_SENTENCE_END = tuple(".!?:;\"'”’)")


def _reader_pages(
    source: Path | bytes, name: str, check: Callable[[int], None] | None = None
) -> list[str]:
    """Each page's text; ``check`` gets the running length after every page (it may raise)."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(source) if isinstance(source, bytes) else str(source))
        if reader.is_encrypted and not reader.decrypt(""):
            raise LoaderError(name, "PDF is encrypted with a password")
        pages, length = [], 0
        for page in reader.pages:
            pages.append(page.extract_text() or "")
            length += len(pages[-1]) + 2
            if check is not None:
                check(length)
        return pages
    except LoaderError:
        raise
    except Exception as exc:  # pypdf raises many kinds on damaged files
        raise LoaderError(name, f"unreadable or corrupt PDF: {exc}") from exc


def _key(line: str) -> str:
    """A line with its case, spacing and digits (page numbers) ignored."""
    return re.sub(r"\d+", "#", " ".join(line.split()).lower())


def _edges(lines: list[str]) -> dict[int, list[tuple[str, int]]]:
    """Line index -> its places among the first / last :data:`EDGE_LINES` non-blank lines."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    places: dict[int, list[tuple[str, int]]] = {}
    for rank, i in enumerate(filled[:EDGE_LINES]):
        places.setdefault(i, []).append(("top", rank))
    for rank, i in enumerate(reversed(filled[-EDGE_LINES:])):
        places.setdefault(i, []).append(("bottom", rank))
    return places


def _edge_keys(lines: list[str]) -> dict[int, set[tuple[str, int, str]]]:
    return {
        i: {(side, rank, _key(lines[i])) for side, rank in places}
        for i, places in _edges(lines).items()
    }


def furniture(pages: list[list[str]]) -> set[tuple[str, int, str]]:
    """Lines that recur at the same place (e.g. second from the bottom) on most pages."""
    if len(pages) < 3:
        return set()
    counts: Counter[tuple[str, int, str]] = Counter()
    for lines in pages:
        counts.update({k for keys in _edge_keys(lines).values() for k in keys})
    need = max(2, math.ceil(len(pages) / 2))
    return {k for k, n in counts.items() if n >= need and k[2]}


def _strip_furniture(lines: list[str], found: set[tuple[str, int, str]]) -> list[str]:
    doomed = {i for i, keys in _edge_keys(lines).items() if keys & found}
    return [line for i, line in enumerate(lines) if i not in doomed]


def join_lines(lines: list[str]) -> str:
    """One paragraph's lines as running text, hyphenated words rejoined."""
    out = ""
    for line in (ln.strip() for ln in lines):
        if not out:
            out = line
        elif re.search(r"[^\W\d_][-\u00ad]$", out) and line[:1].islower():
            out = out[:-1] + line
        else:
            out = out.rstrip("\u00ad") + " " + line
    return out


def paragraphs(lines: list[str]) -> list[str]:
    """Paragraphs of one page's lines (blank lines and short sentence-final lines end them)."""
    widths = sorted(len(line.strip()) for line in lines if line.strip())
    if not widths:
        return []
    full = widths[-1] if len(widths) < 10 else widths[int(0.9 * (len(widths) - 1))]
    out: list[str] = []
    current: list[str] = []
    for line in lines:
        text = line.strip()
        if text:
            current.append(text)
        if current and (not text or (text.endswith(_SENTENCE_END) and len(text) < 0.75 * full)):
            out.append(join_lines(current))
            current = []
    if current:
        out.append(join_lines(current))
    return out


def parse_pdf(
    source: Path | bytes, name: str = "<pdf>", check: Callable[[int], None] | None = None
) -> Parsed:
    """Blocks (one page break per page, then its paragraphs) and flat text of a PDF.

    ``check(length)`` is called as pages are read (a size limit that raises
    stops the extraction early).
    """
    pages = [
        text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        for text in _reader_pages(source, name, check)
    ]
    found = furniture(pages)
    builder = BlockBuilder()
    empty = 0
    for number, lines in enumerate(pages, start=1):
        builder.page_break(number)
        kept = paragraphs(_strip_furniture(lines, found))
        empty += not any(line.strip() for line in lines)
        for text in kept:
            builder.paragraph(text)
    parsed = builder.build()
    if found:
        parsed.warnings.append(
            f"PDF: dropped {len({k[2] for k in found})} running "
            "header/footer line(s) repeated on most pages"
        )
    if empty and pages:
        parsed.warnings.append(
            f"PDF: {empty} of {len(pages)} page(s) have no text (scanned images are not read)"
        )
    return parsed
