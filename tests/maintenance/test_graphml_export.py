"""GraphML, read back by NetworkX (and by lxml's strict XML parser)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import networkx as nx
from lxml import etree

from kgrag.maintenance.exports import render, write

from .conftest import AWKWARD, export_files
from .decode import decode, kinds

GRAPHML = "{http://graphml.graphdrawing.org/xmlns}"
XML_ONLY = {"\x07": "\ufffd", "\x0c": "\ufffd"}  # what XML 1.0 cannot carry


def xml_safe(value: Any) -> Any:
    if isinstance(value, str):
        return "".join(XML_ONLY.get(ch, ch) for ch in value)
    if isinstance(value, list):
        return [xml_safe(v) for v in value]
    if isinstance(value, dict):
        return {k: xml_safe(v) for k, v in value.items()}
    return value


def read_back(attrs: dict[str, Any], kind: dict[str, str]) -> dict[str, Any]:
    """NetworkX's typed attributes; string ones decoded by the column rule."""
    return {
        k: decode(v, kind[k]) if isinstance(v, str) and kind[k] != "str" else v
        for k, v in attrs.items()
    }


def expected(row: dict[str, Any], skip: set[str]) -> dict[str, Any]:
    return {k: xml_safe(v) for k, v in row.items() if k not in skip and v is not None}


def assert_same_graph(data: dict[str, Any], path: Path) -> None:
    graph = nx.read_graphml(path)
    assert not graph.is_directed() and not graph.is_multigraph()
    names = [e["name"] for e in data["entities"]]
    assert list(graph.nodes) == [xml_safe(n) for n in names]
    node_kind, edge_kind = kinds(data["entities"]), kinds(data["relations"])
    for entity in data["entities"]:
        got = read_back(graph.nodes[xml_safe(entity["name"])], node_kind)
        assert got == expected(entity, {"name"}), entity["name"]
    assert graph.number_of_edges() == len(data["relations"])
    for rel in data["relations"]:
        attrs = graph.edges[xml_safe(rel["src"]), xml_safe(rel["tgt"])]
        assert isinstance(attrs["weight"], float)
        assert read_back(attrs, edge_kind) == expected(rel, {"src", "tgt"})


def test_the_index_round_trips_through_networkx(index, exported, tmp_path):
    [path] = export_files(index, tmp_path / "graph.graphml", "graphml")
    assert_same_graph(exported, path)


def test_awkward_values_survive_and_the_xml_is_valid(tmp_path):
    path = tmp_path / "awkward.graphml"
    write(AWKWARD, path, "graphml")
    assert_same_graph(AWKWARD, path)
    root = etree.parse(str(path)).getroot()  # strict: raises on any malformed byte
    keys = {
        f"{k.get('attr.name')}/{k.get('for')}": k.get("attr.type")
        for k in root.findall(f"{GRAPHML}key")
    }
    assert keys["weight/edge"] == "double" and keys["rank/node"] == "long"
    assert keys["manual/node"] == "boolean" and keys["score/node"] == "string"
    graph = root.find(f"{GRAPHML}graph")
    assert graph is not None and graph.get("edgedefault") == "undirected"


def test_timestamps_are_typed_numbers(index, tmp_path):
    [path] = export_files(index, tmp_path / "graph.graphml", "graphml", timestamps=True)
    graph = nx.read_graphml(path)
    first = next(iter(graph.nodes.values()))
    assert isinstance(first["created_at"], float)


def test_a_control_character_in_a_name_is_replaced_not_fatal():
    data = {**AWKWARD, "entities": [{"name": "nul\x00name", "description": "x"}], "relations": []}
    text = render(data, "graphml")
    assert "\x00" not in text and 'id="nul\ufffdname"' in text
