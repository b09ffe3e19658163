"""Chapter titles of an EPUB from its table of contents (EPUB 3 nav, else EPUB 2 NCX).

A chapter file listed several times (``ch1.xhtml``, ``ch1.xhtml#part2``)
takes the title of its first entry, which names the chapter itself.
"""

from __future__ import annotations

import posixpath
from urllib.parse import unquote

from kgrag.ingest.archive import Archive
from kgrag.ingest.formats.safe_xml import local, parse_xml

_NCX = "application/x-dtbncx+xml"


def member(base: str, href: str) -> str:
    """The archive path of ``href`` (fragment dropped) relative to the folder ``base``."""
    return posixpath.normpath(posixpath.join(base, unquote(href.split("#", 1)[0])))


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _first(pairs: list[tuple[str, str]]) -> dict[str, str]:
    titles: dict[str, str] = {}
    for path, title in pairs:
        if title and path not in titles:
            titles[path] = title
    return titles


def nav_titles(data: bytes, base: str) -> dict[str, str]:
    """Titles by chapter path from an EPUB 3 navigation document (its ``toc`` nav)."""
    import lxml.html

    page = lxml.html.document_fromstring(data)
    navs = page.findall(".//nav")
    toc = [n for n in navs if "toc" in (n.get("epub:type") or n.get("role") or "")]
    pairs = [
        (member(base, a.get("href")), _collapse(a.text_content()))
        for nav in (toc or navs)[:1]
        for a in nav.iter("a")
        if a.get("href")
    ]
    return _first(pairs)


def ncx_titles(data: bytes, base: str) -> dict[str, str]:
    """Titles by chapter path from an EPUB 2 NCX (``navPoint`` label and content source)."""
    pairs = []
    for point in parse_xml(data).iter():
        if local(point.tag) != "navPoint":
            continue
        label = next((el for el in point.iter() if local(el.tag) == "text"), None)
        content = next((el for el in point if local(el.tag) == "content"), None)
        if label is not None and content is not None and (src := content.get("src")):
            pairs.append((member(base, src), _collapse(label.text or "")))
    return _first(pairs)


def toc_titles(
    archive: Archive, manifest: dict[str, tuple[str, str, str]], ncx_id: str | None
) -> dict[str, str]:
    """Chapter path -> title; empty when the book has no usable table of contents."""
    from lxml import etree

    try:
        return _titles(archive, manifest, ncx_id)
    except (KeyError, etree.XMLSyntaxError, etree.ParserError, ValueError):
        return {}  # a missing or broken contents list costs the titles, not the book


def _titles(
    archive: Archive, manifest: dict[str, tuple[str, str, str]], ncx_id: str | None
) -> dict[str, str]:
    nav = next((path for path, _, props in manifest.values() if "nav" in props.split()), None)
    if nav is not None:
        titles = nav_titles(archive.read(nav), posixpath.dirname(nav))
        if titles:
            return titles
    ncx = manifest.get(ncx_id or "", ("", "", ""))[0] or next(
        (path for path, kind, _ in manifest.values() if kind == _NCX), ""
    )
    return ncx_titles(archive.read(ncx), posixpath.dirname(ncx)) if ncx else {}
