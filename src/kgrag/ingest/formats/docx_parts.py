""".docx parts read from the bounded archive: relationships, styles, the body as a stream.

* :func:`docx_parts` finds the main document and its styles part through
  the package relationships (``_rels/.rels``, then the document's own).
* :func:`read_styles` parses the styles part (small; it is a whole tree,
  bounded by ``zip_max_member_bytes`` before it is built) into
  python-docx's ``Styles``; a package without one gets python-docx's
  default styles, as ``docx.Document`` would give it.
* :func:`body_items` feeds ``document.xml`` piece by piece into an lxml
  pull parser that builds python-docx's element classes, yields each
  paragraph and table that is a direct child of ``w:body`` once complete
  (what ``Document.iter_inner_content`` yields), then drops it: memory
  holds one top-level block at a time. The text of every ``w:t`` is
  counted as it arrives, so the text budget stops a huge block midway.
* :func:`has_rendered_breaks` scans the inflated bytes once for Word's
  rendered page-break marks (page numbering must be known before the
  first block).

The parser loads no DTD, expands no entity and uses no network, like
:mod:`.safe_xml`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING
from urllib.parse import unquote

from kgrag.ingest.archive import Archive, has_mark
from kgrag.ingest.formats.element import Element, PullParser
from kgrag.ingest.formats.safe_xml import local, parse_xml

if TYPE_CHECKING:
    from docx.styles.styles import Styles

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
W_P, W_TBL, W_T, W_BODY = f"{_W}p", f"{_W}tbl", f"{_W}t", f"{_W}body"
_RENDERED = re.compile(rb"<(?:[\w.-]+:)?lastRenderedPageBreak[\s/>]")


def _targets(archive: Archive, rels: str, base: str) -> dict[str, str]:
    """Relationship type (its last path segment) -> the part it names, from a ``.rels`` part."""
    if not archive.has(rels):
        return {}
    out: dict[str, str] = {}
    for el in parse_xml(archive.read(rels)).iter():
        target, kind = el.get("Target"), el.get("Type", "")
        if local(el.tag) == "Relationship" and target and el.get("TargetMode") != "External":
            path = target.lstrip("/") if target.startswith("/") else posixpath.join(base, target)
            out.setdefault(kind.rsplit("/", 1)[-1], posixpath.normpath(unquote(path)))
    return out


def docx_parts(archive: Archive) -> tuple[str, str | None]:
    """The main document part and its styles part (``None`` when it has none)."""
    main = _targets(archive, "_rels/.rels", "").get("officeDocument", "word/document.xml")
    if not archive.has(main):
        raise KeyError(f"there is no item named {main!r} in the archive")
    folder, file = posixpath.split(main)
    styles = _targets(archive, posixpath.join(folder, "_rels", f"{file}.rels"), folder).get(
        "styles"
    )
    return main, styles if styles and archive.has(styles) else None


def read_styles(archive: Archive, part: str | None) -> Styles:
    """python-docx's ``Styles`` of the package (its defaults when there is no styles part)."""
    from docx.oxml.parser import parse_xml as oxml
    from docx.parts.styles import StylesPart
    from docx.styles.styles import Styles

    defaults: Callable[[], bytes] = StylesPart._default_styles_xml  # not annotated there
    data = archive.read(part) if part else defaults()
    parse_xml(data)  # the safe parser first: a DTD or entity is refused before python-docx's
    return Styles(oxml(data))


def has_rendered_breaks(archive: Archive, member: str) -> bool:
    """Whether Word left rendered page-break marks in ``member``."""
    return has_mark(archive, member, _RENDERED)


def _pull_parser() -> PullParser:
    from docx.oxml.parser import element_class_lookup
    from lxml import etree

    parser = etree.XMLPullParser(
        events=("end",),
        tag=(W_P, W_TBL, W_T),
        remove_blank_text=True,  # as python-docx's own parser
        resolve_entities=False,
        load_dtd=False,
        no_network=True,
        huge_tree=False,
    )
    parser.set_element_class_lookup(element_class_lookup)
    pull: PullParser = parser
    return pull


def body_items(archive: Archive, member: str, check: Callable[[int], None]) -> Iterator[Element]:
    """Top-level ``w:p`` and ``w:tbl`` elements of ``member``, each dropped once used.

    ``check(pending)`` gets the characters of text seen since the last
    block was yielded, after every ``w:t``.
    """
    parser = _pull_parser()
    pending = 0
    for piece in _then_none(archive.chunks(member)):
        if piece is None:
            parser.close()
        else:
            parser.feed(piece)
        for _, el in parser.read_events():
            if el.tag == W_T:
                pending += len(el.text or "")
                check(pending)
                continue
            parent = el.getparent()
            if parent is None or parent.tag != W_BODY:
                continue
            yield el
            pending = 0
            el.clear(keep_tail=True)
            while el.getprevious() is not None:
                del parent[0]


def _then_none(pieces: Iterator[bytes]) -> Iterator[bytes | None]:
    yield from pieces
    yield None
