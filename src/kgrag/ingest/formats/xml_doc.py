"""Generic XML through lxml: element paths as sections, leaves as ``name: text`` rows.

Parsed with :mod:`.safe_xml` (no DTD, no entity expansion, no network;
comments and processing instructions dropped). Tags are read without
their namespaces.

* Elements with child elements open sections: the root and its children
  (:data:`SECTION_DEPTH`), and below them repeated siblings (records) down
  to :data:`RECORD_DEPTH`. A section is a heading holding the element's
  path (``/catalog/book[2]``: an index where siblings share the tag),
  level = depth + 1.
* Simple leaves (text, no child elements) and attributes become rows of
  one table per section, ``title: Midnight Rain`` and ``@id: bk102``;
  other containers give their leaves with a path relative to the section
  (``publisher/address/city: Leeds``).
* Mixed content (text with inline elements, as in DocBook or TEI prose)
  becomes a paragraph of its whole text.
* A section's own rows and paragraphs come first, then its sub-sections
  (so that text after a sub-section is not filed under it).
(Module named ``xml_doc`` so that it does not shadow :mod:`xml`.)
"""

from __future__ import annotations

from collections import Counter

from kgrag.errors import LoaderError
from kgrag.ingest.blocks import BlockBuilder, Parsed
from kgrag.ingest.formats.element import Element
from kgrag.ingest.formats.safe_xml import local, parse_xml
from kgrag.ingest.formats.tabular import NAME_SEP, Check

SECTION_DEPTH = 1  # root = 0: the root and its children open sections
RECORD_DEPTH = 3  # deeper, down to this depth, only repeated siblings (records) do


def _children(el: Element) -> list[Element]:
    return [c for c in el if local(c.tag)]


def _mixed(el: Element) -> bool:
    """Text beside child elements (``<p>Some <b>bold</b> text</p>``)."""
    return bool((el.text or "").strip() or any((c.tail or "").strip() for c in el))


def _segments(children: list[Element]) -> list[str]:
    """Path segment of each child: its tag, with ``[n]`` when siblings share it."""
    counts = Counter(local(c.tag) for c in children)
    seen: Counter[str] = Counter()
    out = []
    for child in children:
        tag = local(child.tag)
        seen[tag] += 1
        out.append(f"{tag}[{seen[tag]}]" if counts[tag] > 1 else tag)
    return out


class _Walker:
    """Sections, rows and paragraphs of an element tree."""

    def __init__(self, builder: BlockBuilder, check: Check | None):
        self.b, self.check = builder, check
        self.rows: list[tuple[str]] = []

    def flush(self) -> None:
        if self.rows:
            self.b.table(self.rows)
            self.rows = []
        if self.check is not None:
            self.check(self.b.length)

    def attributes(self, el: Element, prefix: str) -> None:
        for key, value in el.attrib.items():
            if value.strip():
                self.rows.append((f"{prefix}@{local(key)}{NAME_SEP}{value}",))

    def section(self, el: Element, path: str, depth: int) -> None:
        """``el`` (with child elements) as a section at ``path``: its fields, then sub-sections."""
        self.flush()
        self.b.heading(path, depth + 1)
        self.attributes(el, "")
        subs: list[tuple[Element, str, int]] = []
        self.fields(el, path, depth, "", subs)
        self.flush()
        for child, child_path, child_depth in subs:
            self.section(child, child_path, child_depth)

    def fields(
        self, el: Element, path: str, depth: int, prefix: str, subs: list[tuple[Element, str, int]]
    ) -> None:
        """Rows (named ``prefix`` + tag) and paragraphs of ``el``'s children; sections to ``subs``."""
        children = _children(el)
        for child, segment in zip(children, _segments(children), strict=True):
            if _mixed(child) and _children(child):
                self.flush()
                self.b.paragraph(" ".join("".join(child.itertext()).split()))
            elif not _children(child):
                self.attributes(child, f"{prefix}{segment}")
                if (child.text or "").strip():
                    self.rows.append((f"{prefix}{segment}{NAME_SEP}{child.text}",))
            elif not prefix and _opens_section(depth + 1, segment):
                subs.append((child, f"{path}/{segment}", depth + 1))
            else:
                self.attributes(child, f"{prefix}{segment}")
                self.fields(child, path, depth + 1, f"{prefix}{segment}/", subs)


def _opens_section(depth: int, segment: str) -> bool:
    """A container at ``depth`` is a section: near the root, or a repeated record not too deep."""
    return depth <= SECTION_DEPTH or (depth <= RECORD_DEPTH and segment.endswith("]"))


def parse_xml_document(text: str, name: str = "<xml>", check: Check | None = None) -> Parsed:
    """Blocks and flat text of an XML document (``text``: already decoded)."""
    from lxml import etree

    try:
        root = parse_xml(text)
    except (etree.XMLSyntaxError, ValueError) as exc:
        raise LoaderError(name, f"malformed XML: {exc}") from exc
    builder = BlockBuilder()
    walker = _Walker(builder, check)
    if _children(root) and not _mixed(root):
        walker.section(root, f"/{local(root.tag)}", 0)
    else:
        builder.heading(f"/{local(root.tag)}", 1)
        builder.paragraph(" ".join("".join(root.itertext()).split()))
    return builder.build()
