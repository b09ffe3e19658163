"""The graph as LightRAG's viewer reads it: labels, label search, subgraphs.

A subgraph is ``{nodes: [{id, labels, properties}], edges: [{id, type,
source, target, properties}], is_truncated}``. From a start label it takes
nodes by hops (breadth first, at most ``max_depth``), and within one hop
the best connected first, until ``max_nodes``; ``*`` takes the best
connected nodes of the whole graph. Properties are the stored fields plus
LightRAG's names for them (``entity_id``, ``source_id`` and ``file_path``
joined with ``<SEP>``).
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, TypedDict

from kgrag.storage.layout.rows import EdgeRow, NodeRow
from kgrag.storage.layout.typed import TypedGraph
from kgrag.types import SEP

if TYPE_CHECKING:
    from kgrag.storage.base import GraphStore

Pair = tuple[str, str]
FUZZY_LIMIT = 20_000  # graphs larger than this get substring matches only


class NodeView(TypedDict):
    """A node as LightRAG's viewer reads it."""

    id: str
    labels: list[str]
    properties: dict[str, object]  # the stored fields, entity_id, source_id, file_path


class EdgeView(TypedDict):
    """An edge as LightRAG's viewer reads it."""

    id: str
    type: str
    source: str
    target: str
    properties: dict[str, object]  # the stored fields less src/tgt, source_id, file_path


class Subgraph(TypedDict):
    nodes: list[NodeView]
    edges: list[EdgeView]
    is_truncated: bool


def _joined(fields: NodeRow | EdgeRow) -> dict[str, str]:
    return {
        "source_id": SEP.join(fields.get("source_ids") or []),
        "file_path": SEP.join(fields.get("file_paths") or []),
    }


def node_view(name: str, fields: NodeRow) -> NodeView:
    props: dict[str, object] = {"entity_id": name, **fields, **_joined(fields)}
    return {"id": name, "labels": [name], "properties": props}


def edge_view(pair: Pair, fields: EdgeRow) -> EdgeView:
    src, tgt = fields.get("src", pair[0]), fields.get("tgt", pair[1])
    props: dict[str, object] = {k: v for k, v in fields.items() if k not in ("src", "tgt")}
    return {
        "id": f"{src}-{tgt}",
        "type": "DIRECTED",
        "source": src,
        "target": tgt,
        "properties": {**props, **_joined(fields)},
    }


async def popular(graph: GraphStore, limit: int) -> list[str]:
    """Node names by degree, highest first (ties by name)."""
    degrees = await graph.node_degrees(await graph.all_node_names())
    return [n for n, _ in sorted(degrees.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def _rank(name: str, term: str) -> int | None:
    folded = name.casefold()
    if folded == term:
        return 0
    if folded.startswith(term):
        return 1
    if any(word.startswith(term) for word in folded.split()):
        return 2
    return 3 if term in folded else None


def search(names: list[str], query: str, limit: int) -> list[str]:
    """Names matching ``query``: exact, prefix, word prefix, substring, then close spellings."""
    term = query.strip().casefold()
    if not term:
        return []
    ranked = sorted((r, len(n), n) for n in names if (r := _rank(n, term)) is not None)
    hits = [n for *_, n in ranked[:limit]]
    if len(hits) < limit and len(names) <= FUZZY_LIMIT:
        by_folded = {n.casefold(): n for n in names}
        close = difflib.get_close_matches(term, list(by_folded), n=limit, cutoff=0.6)
        hits += [by_folded[c] for c in close if by_folded[c] not in hits][: limit - len(hits)]
    return hits


async def _next_hop(graph: GraphStore, frontier: list[str], seen: set[str]) -> list[str]:
    """The unseen neighbours of ``frontier``, best connected first."""
    adjacent = await graph.node_edges(frontier)
    found = list(
        dict.fromkeys(
            x for pairs in adjacent.values() for pair in pairs for x in pair if x not in seen
        )
    )
    degrees = await graph.node_degrees(found)
    return sorted(found, key=lambda n: (-degrees.get(n, 0), n))


async def _around(
    graph: GraphStore, label: str, max_depth: int, max_nodes: int
) -> tuple[list[str], bool]:
    names, frontier = [label], [label]
    for _ in range(max_depth):
        hop = await _next_hop(graph, frontier, set(names))
        room = max_nodes - len(names)
        if len(hop) > room:
            return names + hop[:room], True
        names += hop
        frontier = hop
        if not frontier:
            break
    return names, False


async def _best_connected(graph: GraphStore, max_nodes: int) -> tuple[list[str], bool]:
    names = await graph.all_node_names()
    return await popular(graph, max_nodes), len(names) > max_nodes


async def subgraph(graph: GraphStore, label: str, max_depth: int, max_nodes: int) -> Subgraph:
    """The subgraph around ``label`` (``*``: the whole graph, best connected nodes first)."""
    if label == "*":
        names, truncated = await _best_connected(graph, max_nodes)
    elif await graph.get_node(label) is None:
        return {"nodes": [], "edges": [], "is_truncated": False}
    else:
        names, truncated = await _around(graph, label, max_depth, max_nodes)
    kept = set(names)
    adjacent = await graph.node_edges(names)
    pairs = sorted({p for ps in adjacent.values() for p in ps if p[0] in kept and p[1] in kept})
    nodes = await TypedGraph(graph).nodes(names)
    edges = await TypedGraph(graph).edges(pairs)
    return {
        "nodes": [node_view(n, nodes[n]) for n in names if n in nodes],
        "edges": [edge_view(p, edges[p]) for p in pairs if p in edges],
        "is_truncated": truncated,
    }
