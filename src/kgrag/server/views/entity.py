"""An entity and its neighbourhood as plain data: what MCP's ``get_entity`` returns.

The name is matched exactly, else without regard to case when that finds
one entity. Relations are ranked by weight (the strongest first) and cut
at ``limit``; each neighbour they lead to is listed once.
"""

from __future__ import annotations

from kgrag.errors import EntityNotFoundError
from kgrag.server.views import JSONObject
from kgrag.storage.base import GraphStore

_ENTITY_FIELDS = ("entity_type", "description", "aliases", "file_paths")
_RELATION_FIELDS = ("keywords", "description", "weight")
SHORT = 300  # characters of a neighbour's description


async def find_entity(graph: GraphStore, name: str) -> str | None:
    """The graph's name for ``name``: itself, or its one case-insensitive match."""
    if await graph.get_node(name) is not None:
        return name
    wanted = name.casefold()
    matches = [n for n in await graph.all_node_names() if n.casefold() == wanted]
    return matches[0] if len(matches) == 1 else None


def _pick(record: JSONObject, names: tuple[str, ...]) -> JSONObject:
    return {k: record[k] for k in names if k in record}


def _weight(edge: JSONObject) -> float:
    """An edge's stored weight (0.0 when absent or empty)."""
    weight = edge.get("weight")
    return float(weight) if isinstance(weight, int | float | str) and weight else 0.0


async def entity_view(graph: GraphStore, name: str, limit: int) -> JSONObject:
    """The entity ``name``, its ``limit`` strongest relations and their other ends."""
    found = await find_entity(graph, name)
    node = await graph.get_node(found) if found is not None else None
    if found is None or node is None:
        raise EntityNotFoundError(f"no entity named {name!r} in the graph")
    keys = (await graph.node_edges([found]))[found]
    edges = await graph.get_edges(keys)
    ranked = sorted(edges.items(), key=lambda kv: -_weight(kv[1]))[:limit]
    others = list(dict.fromkeys(b if a == found else a for (a, b), _ in ranked))
    nodes = await graph.get_nodes(others)
    relations = [{"source": a, "target": b, **_pick(e, _RELATION_FIELDS)} for (a, b), e in ranked]
    neighbours = [
        {
            "name": other,
            "entity_type": nodes.get(other, {}).get("entity_type", ""),
            "description": str(nodes.get(other, {}).get("description", ""))[:SHORT],
        }
        for other in others
    ]
    return {
        "entity": {"name": found, **_pick(node, _ENTITY_FIELDS)},
        "degree": len(keys),
        "relations": relations,
        "neighbours": neighbours,
    }
