"""The PostgreSQL graph store beyond the conformance suite: neighbourhoods, order, races."""

from __future__ import annotations

import asyncio

from kgrag.storage.base import edge_key
from tests.support.postgres import until_waiting_on_lock


async def _degree_rows(storage) -> int:
    async with storage.db.connection() as conn:
        return (await (await conn.execute("SELECT count(*) FROM node_degree")).fetchone())[0]


async def test_pg_graph_neighbourhood_expands_hop_by_hop(pg_storage):
    g = pg_storage.graph
    await g.upsert_edges(
        {("a", "b"): {}, ("c", "b"): {}, ("c", "d"): {}, ("e", "a"): {}, ("a", "a"): {}}
    )
    await g.upsert_edges({("x", "y"): {}})
    assert await g.neighbourhood(["a"], 0) == {"a"}
    assert await g.neighbourhood(["a"], 1) == {"a", "b", "e"}
    assert await g.neighbourhood(["a"], 2) == {"a", "b", "c", "e"}
    assert await g.neighbourhood(["a"], 5) == set("abcde")
    assert await g.neighbourhood(["d", "x", "d"], 1) == {"c", "d", "x", "y"}
    assert await g.neighbourhood(["nobody"], 2) == {"nobody"}
    assert await g.neighbourhood([], 2) == set()


async def test_pg_graph_neighbourhood_stops_at_the_limit_in_name_order(pg_storage):
    g = pg_storage.graph
    spokes = [f"s{i:04d}" for i in range(1500)]
    await g.upsert_edges({("hub", s): {} for s in spokes})
    await g.upsert_edges({(spokes[0], "far"): {}, ("hub", "a"): {}})
    assert await g.neighbourhood(["hub"], 2, limit=3) == {"hub", "a", "s0000"}
    assert await g.neighbourhood(["s0001", "s0000"], 2, limit=2) == {"s0001", "s0000"}
    assert await g.neighbourhood(["s0001"], 1, limit=0) == set()
    wide = await g.neighbourhood(["hub"], 2, limit=1000)
    assert len(wide) == 1000 and "far" not in wide
    assert wide == {"hub", "a", *spokes[:998]}
    everything = await g.neighbourhood(["far"], 3)
    assert everything == {"far", "hub", "a", *spokes}


async def test_pg_graph_orders_names_as_python_sorts_them(pg_storage):
    g = pg_storage.graph
    names = ["b", "B", "a", "é", "中", "Z", "a b", "a-b", "ab"]
    await g.upsert_nodes({n: {} for n in names})
    await g.upsert_edges({(n, "é"): {"weight": 0.5} for n in names})
    assert await g.all_node_names() == sorted(names)
    assert await g.all_edges() == sorted((*edge_key(n, "é"), 0.5) for n in names)
    assert (await g.node_edges(["é"]))["é"] == sorted(edge_key(n, "é") for n in names)


async def test_pg_graph_degree_rows_vanish_at_zero(pg_storage):
    g = pg_storage.graph
    await g.upsert_edges({("a", "b"): {}, ("b", "c"): {}, ("c", "c"): {}})
    assert await _degree_rows(pg_storage) == 3
    await g.delete_edges([("b", "a"), ("c", "c")])
    assert await _degree_rows(pg_storage) == 2
    await g.delete_nodes(["c"])
    assert await _degree_rows(pg_storage) == 0
    assert await g.node_degrees(["a", "b", "c"]) == {"a": 0, "b": 0, "c": 0}


async def _race(storage, first_write, second_write, fragment: str) -> None:
    """``first_write`` in an open transaction, ``second_write`` waiting on its rows, then both commit."""
    wrote, release = asyncio.Event(), asyncio.Event()

    async def first():
        async with storage.transaction():
            await first_write()
            wrote.set()
            await release.wait()

    async def second():
        await wrote.wait()
        async with storage.transaction():
            await second_write()

    tasks = [asyncio.create_task(first()), asyncio.create_task(second())]
    await until_waiting_on_lock(storage, fragment)
    release.set()
    await asyncio.gather(*tasks)


async def test_pg_graph_concurrent_writers_of_one_edge_count_it_once(pg_storage):
    g = pg_storage.graph
    await g.upsert_edges({("x", "z"): {}})
    await _race(
        pg_storage,
        lambda: g.upsert_edges({("x", "y"): {"weight": 1.0}}),
        lambda: g.upsert_edges({("y", "x"): {"weight": 2.0}}),
        "INSERT INTO edges",
    )
    assert await g.node_degrees(["x", "y", "z"]) == {"x": 2, "y": 1, "z": 1}
    assert await g.all_edges() == [("x", "y", 2.0), ("x", "z", 1.0)]
    await _race(
        pg_storage,
        lambda: g.delete_edges([("x", "y")]),
        lambda: g.delete_edges([("y", "x")]),
        "DELETE FROM edges",
    )
    assert await g.node_degrees(["x", "y", "z"]) == {"x": 1, "y": 0, "z": 1}
