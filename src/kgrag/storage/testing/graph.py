"""Conformance of the graph store: nodes, edges, degrees, and random operation sequences."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgrag.storage.base import GraphStore, Storage, edge_key
from kgrag.storage.testing.common import PROPERTY, StorageFixture


class GraphStoreConformance(StorageFixture):
    async def test_graph_nodes(self, storage: Storage) -> None:
        g = storage.graph
        await g.upsert_nodes({"Scrooge": {"entity_type": "PERSON"}, "Marley": {}})
        await g.upsert_nodes({"Marley": {"entity_type": "GHOST"}})
        assert await g.get_node("Marley") == {"entity_type": "GHOST"}
        assert await g.get_node("marley") is None  # case-sensitive
        assert await g.get_nodes(["Scrooge", "Nobody"]) == {"Scrooge": {"entity_type": "PERSON"}}
        assert sorted(await g.all_node_names()) == ["Marley", "Scrooge"]
        assert await g.node_count() == 2

    async def test_graph_edges_are_undirected_and_canonical(self, storage: Storage) -> None:
        g = storage.graph
        await g.upsert_edges({("Scrooge", "Marley"): {"weight": 2.5, "d": 1}})
        assert await g.get_edge("Marley", "Scrooge") == {"weight": 2.5, "d": 1}
        assert await g.get_edge("Scrooge", "Marley") == {"weight": 2.5, "d": 1}
        got = await g.get_edges([("Scrooge", "Marley"), ("Scrooge", "Bob")])
        assert got == {("Marley", "Scrooge"): {"weight": 2.5, "d": 1}}
        assert await g.all_edges() == [("Marley", "Scrooge", 2.5)]
        await g.delete_edges([("Scrooge", "Marley")])
        assert await g.edge_count() == 0

    async def test_graph_delete_nodes_removes_incident_edges(self, storage: Storage) -> None:
        g = storage.graph
        await g.upsert_nodes({n: {} for n in "abcd"})
        await g.upsert_edges({("a", "b"): {}, ("c", "a"): {}, ("c", "d"): {}})
        await g.delete_nodes(["a"])
        assert await g.edge_count() == 1 and await g.get_edge("c", "a") is None
        assert await g.node_edges(["c", "a"]) == {"c": [("c", "d")], "a": []}
        assert await g.node_degrees(["c", "d", "a"]) == {"c": 1, "d": 1, "a": 0}

    @PROPERTY
    @given(
        ops=st.lists(
            st.tuples(
                st.sampled_from(["node", "del_node", "edge", "del_edge"]),
                st.sampled_from("abcde"),
                st.sampled_from("abcde"),
                st.floats(0, 10),
            ),
            max_size=25,
        )
    )
    async def test_graph_matches_reference_model(
        self, storage: Storage, ops: list[tuple[str, str, str, float]]
    ) -> None:
        g = storage.graph
        await g.delete_nodes(await g.all_node_names())
        await g.delete_edges([(a, b) for a, b, _ in await g.all_edges()])
        nodes: dict[str, dict[str, float]] = {}  # the reference model
        edges: dict[tuple[str, str], float] = {}
        for op, a, b, w in ops:
            await _apply_graph_op(g, nodes, edges, op, a, b, w)
        names = list("abcdef")
        want = {n: sorted(k for k in edges if n in k) for n in names}
        assert await g.node_edges(names) == want
        assert await g.node_degrees(names) == {n: len(v) for n, v in want.items()}
        assert sorted(await g.all_node_names()) == sorted(nodes)
        assert await g.get_nodes(names) == nodes
        assert sorted(await g.all_edges()) == sorted((a, b, w) for (a, b), w in edges.items())

    async def test_graph_batched_reads_cross_slice_boundaries(self, storage: Storage) -> None:
        g = storage.graph
        spokes = [f"s{i:04d}" for i in range(1200)]
        await g.upsert_edges({("hub", s): {"weight": float(i)} for i, s in enumerate(spokes)})
        await g.upsert_edges({(spokes[0], spokes[1]): {}, ("hub", "hub"): {}})
        asked = [(s, "hub") for s in reversed(spokes[:700])] + [("hub", "nobody"), ("x", "y")]
        got = await g.get_edges(asked)
        assert set(got) == {edge_key(s, "hub") for s in spokes[:700]}
        assert got[edge_key(spokes[5], "hub")] == {"weight": 5.0}
        degrees = await g.node_degrees(["hub", *spokes, "nobody"])
        assert degrees["hub"] == 1201 and degrees["nobody"] == 0
        assert [degrees[s] for s in spokes[:3]] == [2, 2, 1]
        assert len((await g.node_edges(["hub"]))["hub"]) == 1201

    async def test_graph_degrees_follow_commit_and_rollback(self, storage: Storage) -> None:
        g = storage.graph
        await g.upsert_edges({("a", "b"): {}, ("b", "c"): {}, ("c", "c"): {}})
        before = await g.node_degrees(list("abcd"))
        assert before == {"a": 1, "b": 2, "c": 2, "d": 0}
        with pytest.raises(RuntimeError):
            async with storage.transaction():
                await g.upsert_edges({("a", "d"): {}, ("b", "a"): {"weight": 2.0}})
                await g.delete_nodes(["c"])
                assert await g.node_degrees(list("abcd")) == {"a": 2, "b": 1, "c": 0, "d": 1}
                raise RuntimeError
        assert await g.node_degrees(list("abcd")) == before
        async with storage.transaction():
            await g.delete_edges([("c", "b")])
            await g.upsert_edges({("d", "a"): {}})
        assert await g.node_degrees(list("abcd")) == {"a": 2, "b": 1, "c": 1, "d": 1}

    @PROPERTY
    @given(
        ops=st.lists(
            st.tuples(
                st.sampled_from(["edges", "del_edges", "del_nodes"]),
                st.lists(
                    st.tuples(st.sampled_from("abcdefg"), st.sampled_from("abcdefg")), max_size=6
                ),
            ),
            max_size=15,
        )
    )
    async def test_graph_degrees_match_reference_after_batches(
        self, storage: Storage, ops: list[tuple[str, list[tuple[str, str]]]]
    ) -> None:
        g = storage.graph
        await g.delete_nodes(await g.all_node_names())
        await g.delete_edges([(a, b) for a, b, _ in await g.all_edges()])
        edges: set[tuple[str, str]] = set()
        for op, pairs in ops:
            if op == "edges":  # both orientations of a pair may come in one batch
                await g.upsert_edges({pair: {"weight": 1.0} for pair in pairs})
                edges.update(edge_key(a, b) for a, b in pairs)
            elif op == "del_edges":
                await g.delete_edges(pairs)
                edges.difference_update(edge_key(a, b) for a, b in pairs)
            else:
                gone = {a for a, _ in pairs}
                await g.delete_nodes(sorted(gone))
                edges = {k for k in edges if not gone & set(k)}
        names = list("abcdefgh")
        assert await g.node_degrees(names) == {n: sum(n in k for k in edges) for n in names}
        assert await g.get_edges(sorted(edges)) == {k: {"weight": 1.0} for k in edges}


async def _apply_graph_op(
    g: GraphStore,
    nodes: dict[str, dict[str, float]],
    edges: dict[tuple[str, str], float],
    op: str,
    a: str,
    b: str,
    w: float,
) -> None:
    if op == "node":
        await g.upsert_nodes({a: {"w": w}})
        nodes[a] = {"w": w}
    elif op == "del_node":
        await g.delete_nodes([a])
        nodes.pop(a, None)
        for key in [k for k in edges if a in k]:
            del edges[key]
    elif op == "edge":
        await g.upsert_edges({(a, b): {"weight": w}})
        edges[edge_key(a, b)] = w
    else:
        await g.delete_edges([(b, a)])
        edges.pop(edge_key(a, b), None)
