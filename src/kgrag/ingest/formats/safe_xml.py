"""XML parts read safely with lxml: no DTDs, no entity expansion, no network.

Shared by the readers of XML-based formats (.epub, .odt, .xml). A
document type definition is never loaded and entities are never
expanded, so a "billion laughs" file cannot blow up and an external
entity cannot read a local file or reach the network. Errors stay lxml's
(:class:`lxml.etree.XMLSyntaxError`); each caller translates them into a
:class:`~kgrag.errors.LoaderError` naming its format.
"""

from __future__ import annotations

import re

from kgrag.ingest.formats.element import Element, PullParser

_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")


def xml_parser(**extra: object) -> object:
    """An lxml XML parser that never loads a DTD, expands entities or uses the network."""
    from lxml import etree

    return etree.XMLParser(
        resolve_entities=False,
        load_dtd=False,
        no_network=True,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        **extra,
    )


def pull_parser(**extra: object) -> PullParser:
    """An lxml pull parser (``feed`` / ``read_events``) with :func:`xml_parser`'s safety."""
    from lxml import etree

    options = {
        "resolve_entities": False,
        "load_dtd": False,
        "no_network": True,
        "huge_tree": False,
        "remove_comments": True,
        "remove_pis": True,
    }
    parser: PullParser = etree.XMLPullParser(**{**options, **extra})
    return parser


def parse_xml(data: bytes | str) -> Element:
    """The root element of an XML document (bytes: their declared encoding is honoured).

    Text must already be decoded; its XML declaration, if any, is dropped
    (lxml refuses text that still declares an encoding).
    """
    from lxml import etree

    if isinstance(data, str):
        data = _DECLARATION.sub("", data, count=1).encode("utf-8")
    root: Element = etree.fromstring(data, xml_parser())
    return root


def local(tag: object) -> str:
    """An element's tag without its namespace (``""`` for comments and processing instructions)."""
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]
