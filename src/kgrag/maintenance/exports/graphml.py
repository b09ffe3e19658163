"""The graph as GraphML, for Gephi, yEd, NetworkX, Neo4j (APOC) and igraph.

Plain GraphML 1.0 without extensions: an undirected graph (as LightRAG
writes it), node id = entity name, edge endpoints = the relation's
canonical pair. Every other field of an entity or relation is one
``<key>`` with an ``attr.type`` that holds all its values: ``boolean``,
``long``, ``double`` (``weight`` always), else ``string`` — lists of
strings joined with ``<SEP>``, mappings and nested lists as JSON. Text is
escaped for XML; characters XML 1.0 cannot carry (most control
characters) become U+FFFD. Written by hand, streaming: neither lxml's tree
nor networkx is needed, and the bytes are stable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO
from xml.sax.saxutils import escape, quoteattr

from kgrag.maintenance.export_records import ExportData
from kgrag.maintenance.exports.tables import as_text, column_kind

_HEADER = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<graphml xmlns="http://graphml.graphdrawing.org/xmlns"'
    ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
    ' xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns'
    ' http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n'
)
_TYPES = {"bool": "boolean", "int": "long", "float": "double"}  # everything else: string
_FORCED = {"weight": "float"}
# What XML 1.0 allows: tab, newline, carriage return and the planes minus surrogates.
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass(frozen=True)
class Key:
    """One GraphML attribute declaration."""

    id: str
    domain: str  # "node" or "edge"
    name: str
    kind: str


def clean(text: str) -> str:
    """``text`` with the characters XML 1.0 forbids replaced by U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def _attr(text: str) -> str:
    return quoteattr(clean(text))


def _text(text: str) -> str:
    return escape(clean(text), {"\r": "&#13;"})


def _keys(
    rows: Sequence[Mapping[str, object]], domain: str, skip: set[str], start: int
) -> list[Key]:
    names = sorted({k for row in rows for k in row} - skip)
    return [
        Key(f"d{start + i}", domain, n, _FORCED.get(n) or column_kind(r.get(n) for r in rows))
        for i, n in enumerate(names)
    ]


def _data(row: Mapping[str, object], keys: list[Key], indent: str) -> str:
    return "".join(
        f'{indent}<data key="{k.id}">{_text(as_text(row[k.name], k.kind))}</data>\n'
        for k in keys
        if row.get(k.name) is not None
    )


def write_graphml(data: ExportData, out: TextIO) -> None:
    """The export's entities and relations as one GraphML document on ``out``."""
    entities, relations = data["entities"], data["relations"]
    node_keys = _keys(entities, "node", {"name"}, 0)
    edge_keys = _keys(relations, "edge", {"src", "tgt"}, len(node_keys))
    out.write(_HEADER)
    for k in node_keys + edge_keys:
        kind = _TYPES.get(k.kind, "string")
        out.write(
            f'  <key id="{k.id}" for="{k.domain}" attr.name={_attr(k.name)} attr.type="{kind}"/>\n'
        )
    out.write('  <graph id="kgrag" edgedefault="undirected">\n')
    for e in entities:
        out.write(f"    <node id={_attr(e['name'])}>\n{_data(e, node_keys, ' ' * 6)}    </node>\n")
    for r in relations:
        ends = f"source={_attr(r['src'])} target={_attr(r['tgt'])}"
        out.write(f"    <edge {ends}>\n{_data(r, edge_keys, ' ' * 6)}    </edge>\n")
    out.write("  </graph>\n</graphml>\n")
