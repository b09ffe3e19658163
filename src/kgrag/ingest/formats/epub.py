"""EPUB (2 and 3) with zipfile and lxml: chapters as sections, in spine order.

No EPUB library is used: ``META-INF/container.xml`` names the package
document (OPF), whose manifest and spine give the chapter files in
reading order; the table of contents (EPUB 3 ``nav`` document, else the
EPUB 2 NCX) gives their titles. XML parts are read with
:mod:`.safe_xml` (no DTD, no entities, no network). Every part is
inflated through the bounded archive reader (:mod:`kgrag.ingest.archive`):
a chapter is parsed as a whole tree only once it has inflated within
``zip_max_member_bytes`` and the archive's total.

Each chapter with text opens with a level-1 heading: its title in the
table of contents, else its first heading, else ``Chapter N``. Its XHTML
is walked by the HTML block parser (:mod:`.html`; headings, paragraphs,
lists, tables, code, quotes) with its own headings one level deeper
(``h1`` -> 2 ... ``h6`` stays 6) so that they nest under the chapter; a
first heading that repeats the chapter title is not repeated. Chapters
hold no page furniture, so readability's main-content pass is not run.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from urllib.parse import unquote

from kgrag.errors import LoaderError
from kgrag.ingest.archive import Archive
from kgrag.ingest.blocks import BlockBuilder, Parsed
from kgrag.ingest.formats.element import Element
from kgrag.ingest.formats.epub_chapter import chapter_body, walk_chapter
from kgrag.ingest.formats.epub_toc import member, toc_titles
from kgrag.ingest.formats.safe_xml import local, parse_xml
from kgrag.ingest.formats.tabular import Check

_XHTML = ("application/xhtml+xml", "text/html", "application/xml")


def _package_path(archive: Archive) -> str:
    container = parse_xml(archive.read("META-INF/container.xml"))
    for el in container.iter():
        if local(el.tag) == "rootfile" and (path := el.get("full-path")):
            return unquote(path)
    raise ValueError("META-INF/container.xml names no package document")


def _manifest(opf: Element, base: str) -> dict[str, tuple[str, str, str]]:
    """Manifest id -> (archive path, media type, properties)."""
    out: dict[str, tuple[str, str, str]] = {}
    for el in opf.iter():
        if local(el.tag) == "item" and (item := el.get("id")):
            out[item] = (
                member(base, el.get("href", "")),
                el.get("media-type", ""),
                el.get("properties", ""),
            )
    return out


def _spine(opf: Element) -> tuple[list[str], str | None]:
    """The spine's item ids in reading order, and its ``toc`` (NCX) id."""
    for el in opf.iter():
        if local(el.tag) == "spine":
            ids = [ref.get("idref") for ref in el if local(ref.tag) == "itemref"]
            return [i for i in ids if i], el.get("toc")
    return [], None


def _chapters(archive: Archive) -> tuple[list[str], dict[str, str]]:
    """Chapter paths in spine order and the table of contents' titles by path."""
    opf_path = _package_path(archive)
    opf = parse_xml(archive.read(opf_path))
    manifest = _manifest(opf, posixpath.dirname(opf_path))
    ids, ncx = _spine(opf)
    paths = [
        manifest[i][0]
        for i in ids
        if i in manifest and manifest[i][1] in _XHTML and "nav" not in manifest[i][2].split()
    ]  # the nav document is the contents list
    return paths, toc_titles(archive, manifest, ncx)


def parse_epub(source: Archive | Path, name: str = "<epub>", check: Check | None = None) -> Parsed:
    """Blocks and flat text of an EPUB, chapter by chapter in reading order.

    ``check(length)`` is called after every chapter (a size limit that
    raises stops the reading early).
    """
    archive = Archive.of(source, name, ".epub")
    builder = BlockBuilder()
    try:
        paths, titles = _chapters(archive)
        for number, path in enumerate(dict.fromkeys(paths), start=1):
            body = chapter_body(archive.read(path))
            if body is not None:
                walk_chapter(builder, body, titles.get(path), number)
            if check is not None:
                check(builder.length)
    except LoaderError:
        raise
    except Exception as exc:  # zipfile, lxml syntax errors, KeyError for a missing part
        raise LoaderError(name, f"unreadable or corrupt .epub: {exc}") from exc
    return builder.build()
