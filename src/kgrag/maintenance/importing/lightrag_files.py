"""Reading the files of a LightRAG 1.5.x working directory (default storages).

- ``kv_store_*.json``: JSON objects keyed by id (JsonKVStorage, JsonDocStatusStorage);
- ``graph_chunk_entity_relation.graphml``: the NetworkX graph, written by
  ``networkx.write_graphml``; read here with lxml, entities never expanded,
  no DTD loaded, nothing fetched, and a file with a DOCTYPE refused;
- ``vdb_*.json``: NanoVectorDB files, ``{"embedding_dim", "data": [...],
  "matrix": base64 of the float32 rows, in ``data`` order}``.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from lxml import etree

from kgrag.maintenance.importing.model import ImportFormatError

GRAPHML = "graph_chunk_entity_relation.graphml"
_NS = "{http://graphml.graphdrawing.org/xmlns}"


def read_kv(workdir: Path, name: str, required: bool = True) -> dict[str, Any]:
    """One JSON KV store (``kv_store_<name>.json``); empty when optional and absent."""
    path = workdir / f"kv_store_{name}.json"
    if not path.exists():
        if required:
            raise ImportFormatError(
                f"{workdir}: no {path.name}; is it a LightRAG working directory?"
            )
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ImportFormatError(f"{path}: unreadable ({exc})") from exc
    if not isinstance(data, dict):
        raise ImportFormatError(f"{path}: not a JSON object")
    return data


@dataclass(slots=True)
class Graph:
    """The GraphML graph: node data by name, edge data by (source, target) as written."""

    nodes: dict[str, dict[str, str]] = field(default_factory=dict)
    edges: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)


def _data(element: Any, keys: dict[str, str]) -> dict[str, str]:
    return {keys.get(d.get("key"), d.get("key")): d.text or "" for d in element.iter(_NS + "data")}


def read_graphml(workdir: Path) -> Graph:
    """The entity/relation graph; an absent file is an empty graph."""
    path = workdir / GRAPHML
    if not path.exists():
        return Graph()
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    try:
        tree = etree.parse(str(path), parser)
    except (OSError, etree.XMLSyntaxError) as exc:
        raise ImportFormatError(f"{path}: not readable GraphML ({exc})") from exc
    if tree.docinfo.doctype or tree.docinfo.internalDTD is not None:
        # networkx never writes one; a DTD could only bring entity tricks.
        raise ImportFormatError(f"{path}: GraphML with a DOCTYPE is not read")
    root = tree.getroot()
    keys = {k.get("id"): k.get("attr.name") for k in root.iter(_NS + "key")}
    graph = Graph()
    for node in root.iter(_NS + "node"):
        graph.nodes[node.get("id")] = _data(node, keys)
    for edge in root.iter(_NS + "edge"):
        graph.edges[(edge.get("source"), edge.get("target"))] = _data(edge, keys)
    return graph


def read_vectors(workdir: Path, namespace: str) -> dict[str, np.ndarray]:
    """A NanoVectorDB file as ``{embedded content: vector}``; empty when absent or unusable."""
    path = workdir / f"vdb_{namespace}.json"
    if not path.exists():
        return {}
    try:
        db = json.loads(path.read_text(encoding="utf-8"))
        dim, rows = int(db["embedding_dim"]), db["data"]
        matrix = np.frombuffer(base64.b64decode(db["matrix"]), dtype="<f4").reshape(-1, dim)
    except (OSError, ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise ImportFormatError(f"{path}: not a NanoVectorDB file ({exc})") from exc
    if len(matrix) != len(rows):
        raise ImportFormatError(f"{path}: {len(rows)} rows but {len(matrix)} vectors")
    return {
        row["content"]: matrix[i].astype(np.float32)
        for i, row in enumerate(rows)
        if isinstance(row.get("content"), str)
    }
