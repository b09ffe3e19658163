"""A conformance suite every storage backend inherits.

Each class holds the tests of one role and asks for a pytest fixture
``storage``: an opened :class:`~kgrag.storage.base.Storage`. A backend's
test module subclasses the classes it supports and overrides that one
fixture::

    class TestMyBackend(StorageConformance):
        @pytest.fixture
        async def storage(self, tmp_path):
            s = MyStorage(tmp_path)
            await s.open()
            yield s
            await s.close()

Property tests (hypothesis) share one storage across examples, so each
example uses a fresh namespace or clears what it uses first.
"""

from __future__ import annotations

import asyncio
import uuid

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgrag.errors import StorageError
from kgrag.storage.base import edge_key
from kgrag.types import DocRecord, DocStatus

# Each backend subclass runs the same property test (differing executors);
# the state lives in the ``storage`` fixture, not the class, so that is safe.
PROPERTY = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.differing_executors])

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def fresh(prefix: str) -> str:
    """A namespace nobody used before (for property examples)."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, np.float64)
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


class StorageFixture:
    """Declares the fixture subclasses must provide."""

    @pytest.fixture
    async def storage(self):
        raise NotImplementedError("override the `storage` fixture")


class KVStoreConformance(StorageFixture):
    async def test_kv_roundtrip(self, storage):
        kv = storage.kv("docs")
        await kv.upsert({"b": {"n": 2}, "a": {"text": "héllo 世界"}})
        assert await kv.get("a") == {"text": "héllo 世界"}
        assert await kv.get("zz") is None
        assert await kv.get_many(["b", "zz", "a"]) == [{"n": 2}, None, {"text": "héllo 世界"}]
        assert await kv.keys() == ["a", "b"]
        assert await kv.count() == 2

    async def test_kv_upsert_replaces_and_delete_removes(self, storage):
        kv = storage.kv("docs")
        await kv.upsert({"a": {"x": 1, "y": 2}})
        await kv.upsert({"a": {"x": 3}})
        assert await kv.get("a") == {"x": 3}
        await kv.delete(["a", "never"])
        assert await kv.get("a") is None and await kv.count() == 0

    async def test_kv_missing(self, storage):
        kv = storage.kv("docs")
        await kv.upsert({"a": {}, "b": {}})
        assert await kv.missing(["a", "c", "d", "c"]) == {"c", "d"}
        assert await kv.missing([]) == set()

    async def test_kv_namespaces_are_separate(self, storage):
        await storage.kv("one").upsert({"k": {"v": 1}})
        assert await storage.kv("two").get("k") is None
        assert await storage.kv("two").count() == 0

    async def test_kv_large_value(self, storage):
        text = "Marley was dead: to begin with. 马利死了。" * 3000
        await storage.kv("docs").upsert({"big": {"content": text}})
        assert (await storage.kv("docs").get("big"))["content"] == text

    @PROPERTY
    @given(items=st.dictionaries(st.text(max_size=20), st.dictionaries(st.text(), JSON),
                                 max_size=8))
    async def test_kv_roundtrips_arbitrary_json(self, storage, items):
        kv = storage.kv(fresh("kv"))
        await kv.upsert(items)
        assert await kv.get_many(list(items)) == list(items.values())
        assert await kv.keys() == sorted(items)


class MetaConformance(StorageFixture):
    async def test_meta_roundtrip(self, storage):
        assert await storage.get_meta("embedding") is None
        await storage.set_meta("embedding", {"model": "m", "dim": 384})
        await storage.set_meta("schema", 3)
        assert await storage.get_meta("embedding") == {"model": "m", "dim": 384}
        await storage.set_meta("schema", 4)
        assert await storage.get_meta("schema") == 4


class VectorStoreConformance(StorageFixture):
    async def test_vectors_query_ranks_by_cosine(self, storage):
        vs = storage.vectors("ents")
        await vs.upsert(["x", "y", "xy"], np.array([[2, 0], [0, 3], [1, 1]], float),
                        [{"n": "x"}, {"n": "y"}, {"n": "xy"}])
        hits = await vs.query(np.array([1.0, 0.1]), top_k=2)
        assert [h.id for h in hits] == ["x", "xy"]
        assert hits[0].meta == {"n": "x"}
        assert hits[0].score == pytest.approx(1 / np.hypot(1, 0.1), abs=1e-5)
        assert await vs.count() == 3

    async def test_vectors_are_normalised(self, storage):
        vs = storage.vectors("ents")
        await vs.upsert(["a"], np.array([[3.0, 4.0]]), [{}])
        got = await vs.get_vectors(["a", "missing"])
        assert list(got) == ["a"]
        np.testing.assert_allclose(got["a"], [0.6, 0.8], atol=1e-3)

    async def test_vectors_threshold_filters(self, storage):
        vs = storage.vectors("ents")
        await vs.upsert(["a", "b"], np.array([[1.0, 0.0], [0.0, 1.0]]), [{}, {}])
        hits = await vs.query(np.array([1.0, 0.2]), top_k=5, threshold=0.5)
        assert [h.id for h in hits] == ["a"]

    async def test_vectors_follow_updates_after_a_query(self, storage):
        vs = storage.vectors("ents")
        await vs.upsert(["a", "b"], np.array([[1.0, 0.0], [0.0, 1.0]]), [{}, {}])
        assert (await vs.query(np.array([1.0, 0.0]), 1))[0].id == "a"
        await vs.upsert(["b"], np.array([[1.0, 0.01]]), [{"v": 2}])
        await vs.delete(["a"])
        hits = await vs.query(np.array([1.0, 0.0]), 5)
        assert [h.id for h in hits] == ["b"] and hits[0].meta == {"v": 2}
        assert await vs.get_metas(["a", "b"]) == {"b": {"v": 2}}

    async def test_vectors_dimension_mismatch_is_refused(self, storage):
        vs = storage.vectors("ents")
        await vs.upsert(["a"], np.ones((1, 4)), [{}])
        with pytest.raises(StorageError, match="dimension"):
            await vs.upsert(["b"], np.ones((1, 5)), [{}])
        with pytest.raises(StorageError, match="dimension"):
            await vs.query(np.ones(3), 1)
        assert await vs.count() == 1

    async def test_vectors_empty_namespace(self, storage):
        vs = storage.vectors("nothing")
        assert await vs.query(np.ones(4), 3) == []
        assert await vs.count() == 0 and await vs.get_vectors(["a"]) == {}

    @PROPERTY
    @given(ops=st.lists(st.tuples(st.sampled_from(["upsert", "delete", "query"]),
                                  st.lists(st.integers(0, 15), min_size=1, max_size=6),
                                  st.integers(0, 2**32 - 1)), min_size=1, max_size=12),
           top_k=st.integers(1, 8), threshold=st.none() | st.floats(-0.5, 0.8))
    async def test_vectors_match_brute_force(self, storage, ops, top_k, threshold):
        vs, ref = storage.vectors(fresh("vec")), {}
        for op, keys, seed in ops:
            ids = [f"v{k}" for k in dict.fromkeys(keys)]
            rows = np.random.default_rng(seed).standard_normal((len(ids), 6))
            if op == "upsert":
                await vs.upsert(ids, rows, [{"id": i} for i in ids])
                ref.update(zip(ids, unit(rows)))
            elif op == "delete":
                await vs.delete(ids)
                for i in ids:
                    ref.pop(i, None)
            await _check_brute_force(vs, ref, rows[0], top_k, threshold)


async def _check_brute_force(vs, ref, query, top_k, threshold) -> None:
    hits = await vs.query(query, top_k, threshold)
    q = unit(query)
    scores = {i: float(v @ q) for i, v in ref.items()}
    if threshold is not None:
        scores = {i: s for i, s in scores.items() if s >= threshold - 1e-6}
    expected = sorted(scores.values(), reverse=True)[:top_k]
    assert len({h.id for h in hits}) == len(hits)
    assert abs(len(hits) - len(expected)) <= (0 if threshold is None else 1)
    for hit in hits:
        assert hit.score == pytest.approx(scores[hit.id], abs=1e-5)
        assert hit.meta == {"id": hit.id}
    got = [h.score for h in hits]
    assert got == sorted(got, reverse=True)
    n = min(len(got), len(expected))
    np.testing.assert_allclose(got[:n], expected[:n], atol=1e-5)
    assert await vs.count() == len(ref)


class GraphStoreConformance(StorageFixture):
    async def test_graph_nodes(self, storage):
        g = storage.graph
        await g.upsert_nodes({"Scrooge": {"entity_type": "PERSON"}, "Marley": {}})
        await g.upsert_nodes({"Marley": {"entity_type": "GHOST"}})
        assert await g.get_node("Marley") == {"entity_type": "GHOST"}
        assert await g.get_node("marley") is None  # case-sensitive
        assert await g.get_nodes(["Scrooge", "Nobody"]) == {"Scrooge": {"entity_type": "PERSON"}}
        assert sorted(await g.all_node_names()) == ["Marley", "Scrooge"]
        assert await g.node_count() == 2

    async def test_graph_edges_are_undirected_and_canonical(self, storage):
        g = storage.graph
        await g.upsert_edges({("Scrooge", "Marley"): {"weight": 2.5, "d": 1}})
        assert await g.get_edge("Marley", "Scrooge") == {"weight": 2.5, "d": 1}
        assert await g.get_edge("Scrooge", "Marley") == {"weight": 2.5, "d": 1}
        got = await g.get_edges([("Scrooge", "Marley"), ("Scrooge", "Bob")])
        assert got == {("Marley", "Scrooge"): {"weight": 2.5, "d": 1}}
        assert await g.all_edges() == [("Marley", "Scrooge", 2.5)]
        await g.delete_edges([("Scrooge", "Marley")])
        assert await g.edge_count() == 0

    async def test_graph_delete_nodes_removes_incident_edges(self, storage):
        g = storage.graph
        await g.upsert_nodes({n: {} for n in "abcd"})
        await g.upsert_edges({("a", "b"): {}, ("c", "a"): {}, ("c", "d"): {}})
        await g.delete_nodes(["a"])
        assert await g.edge_count() == 1 and await g.get_edge("c", "a") is None
        assert await g.node_edges(["c", "a"]) == {"c": [("c", "d")], "a": []}
        assert await g.node_degrees(["c", "d", "a"]) == {"c": 1, "d": 1, "a": 0}

    @PROPERTY
    @given(ops=st.lists(st.tuples(st.sampled_from(["node", "del_node", "edge", "del_edge"]),
                                  st.sampled_from("abcde"), st.sampled_from("abcde"),
                                  st.floats(0, 10)), max_size=25))
    async def test_graph_matches_reference_model(self, storage, ops):
        g = storage.graph
        await g.delete_nodes(await g.all_node_names())
        await g.delete_edges([(a, b) for a, b, _ in await g.all_edges()])
        nodes, edges = {}, {}
        for op, a, b, w in ops:
            await _apply_graph_op(g, nodes, edges, op, a, b, w)
        names = list("abcdef")
        want = {n: sorted(k for k in edges if n in k) for n in names}
        assert await g.node_edges(names) == want
        assert await g.node_degrees(names) == {n: len(v) for n, v in want.items()}
        assert sorted(await g.all_node_names()) == sorted(nodes)
        assert await g.get_nodes(names) == nodes
        assert sorted(await g.all_edges()) == sorted((a, b, w) for (a, b), w in edges.items())


    async def test_graph_batched_reads_cross_slice_boundaries(self, storage):
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

    async def test_graph_degrees_follow_commit_and_rollback(self, storage):
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
    @given(ops=st.lists(st.tuples(st.sampled_from(["edges", "del_edges", "del_nodes"]),
                                  st.lists(st.tuples(st.sampled_from("abcdefg"),
                                                     st.sampled_from("abcdefg")), max_size=6)),
                        max_size=15))
    async def test_graph_degrees_match_reference_after_batches(self, storage, ops):
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


async def _apply_graph_op(g, nodes, edges, op, a, b, w) -> None:
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


def record(doc_id: str, status: DocStatus, seq: int) -> DocRecord:
    return DocRecord(id=doc_id, status=status, file_path=f"{doc_id}.txt", content_length=10,
                     content_summary="summary", enqueue_seq=seq, chunk_ids=["chunk-1"])


class DocStatusConformance(StorageFixture):
    async def test_doc_status_roundtrip(self, storage):
        ds, rec = storage.doc_status, record("doc-1", DocStatus.FAILED, 3)
        rec.error = "boom"
        await ds.upsert([rec])
        assert await ds.get("doc-1") == rec
        assert await ds.get("doc-2") is None
        assert await ds.get_many(["doc-1", "doc-2"]) == {"doc-1": rec}

    async def test_doc_status_by_status_in_enqueue_order(self, storage):
        ds = storage.doc_status
        await ds.upsert([record("c", DocStatus.PENDING, 3), record("a", DocStatus.PENDING, 1),
                         record("b", DocStatus.PROCESSED, 2), record("d", DocStatus.FAILED, 0)])
        got = await ds.by_status(DocStatus.PENDING, DocStatus.FAILED)
        assert [r.id for r in got] == ["d", "a", "c"]
        counts = await ds.counts()
        assert counts["pending"] == 2 and counts["processed"] == 1 and counts["failed"] == 1
        assert counts.get("processing", 0) == 0
        await ds.upsert([record("a", DocStatus.PROCESSING, 1)])
        assert [r.id for r in await ds.by_status(DocStatus.PENDING)] == ["c"]

    async def test_doc_status_next_seq_never_repeats(self, storage):
        ds = storage.doc_status
        assert await ds.next_seq() >= 1
        await ds.upsert([record("a", DocStatus.PENDING, 7), record("b", DocStatus.PENDING, 4)])
        assert await ds.next_seq() > 7
        await ds.delete(["a"])
        assert await ds.get("a") is None
        assert await ds.next_seq() > 7


class LexicalConformance(StorageFixture):
    TEXTS = {
        "c1": "Scrooge was a squeezing, wrenching, grasping, covetous old sinner.",
        "c2": "Marley was dead: to begin with. Scrooge signed the register.",
        "c3": "The Cratchit family ate the Christmas pudding together.",
        "c4": "刘备与孙权联合，在赤壁大败曹操的军队。",
    }

    @pytest.fixture
    async def lexical(self, storage):
        if storage.lexical is None:
            pytest.skip("backend has no lexical index")
        await storage.lexical.add(self.TEXTS)
        return storage.lexical

    async def test_lexical_ranks_matches(self, lexical):
        hits = await lexical.search("covetous old SINNER Scrooge", 10)
        assert [i for i, _ in hits][:2] == ["c1", "c2"] and len(hits) == 2
        assert all(s > 0 for _, s in hits) and hits[0][1] > hits[1][1]

    async def test_lexical_chinese(self, lexical):
        assert [i for i, _ in await lexical.search("曹操的军队在哪里", 5)] == ["c4"]
        assert [i for i, _ in await lexical.search("赤壁", 5)] == ["c4"]

    async def test_lexical_delete_and_replace(self, lexical):
        await lexical.delete(["c1"])
        await lexical.add({"c3": "Scrooge and the pudding"})
        assert {i for i, _ in await lexical.search("scrooge", 5)} == {"c2", "c3"}
        assert await lexical.search("cratchit", 5) == []

    @pytest.mark.parametrize("query", ['"', "AND OR NOT", "a*", "(x", "col:umn", "  ", "-", "NEAR("])
    async def test_lexical_odd_queries_do_not_fail(self, lexical, query):
        assert isinstance(await lexical.search(query, 3), list)


class TransactionConformance(StorageFixture):
    async def _write_everything(self, storage, tag: str) -> None:
        await storage.kv("docs").upsert({tag: {"v": tag}})
        await storage.vectors("ents").upsert([tag], np.array([[1.0, 2.0, 3.0]]), [{}])
        await storage.graph.upsert_nodes({tag: {}})
        await storage.graph.upsert_edges({(tag, "hub"): {}})
        await storage.doc_status.upsert([record(tag, DocStatus.PROCESSED, 1)])
        await storage.set_meta(tag, 1)
        if storage.lexical is not None:
            await storage.lexical.add({tag: f"word{tag}"})

    async def _present(self, storage, tag: str) -> list[bool]:
        hits = await storage.vectors("ents").query(np.array([1.0, 2.0, 3.0]), 5)
        found = [await storage.kv("docs").get(tag) is not None, tag in [h.id for h in hits],
                 await storage.vectors("ents").get_vectors([tag]) != {},
                 await storage.graph.get_node(tag) is not None,
                 await storage.graph.get_edge(tag, "hub") is not None,
                 await storage.doc_status.get(tag) is not None,
                 await storage.get_meta(tag) is not None]
        if storage.lexical is not None:
            found.append(bool(await storage.lexical.search(f"word{tag}", 3)))
        return found

    async def test_commit_keeps_every_role(self, storage):
        async def body():
            async with storage.transaction():
                await self._write_everything(storage, "t1")
        await asyncio.wait_for(body(), 10)  # a deadlock fails instead of hanging
        assert all(await self._present(storage, "t1"))

    async def test_rollback_leaves_nothing(self, storage):
        await storage.vectors("ents").upsert(["base"], np.array([[1.0, 2.0, 3.0]]), [{}])
        await storage.vectors("ents").query(np.ones(3), 1)  # matrix now in memory

        async def body():
            async with storage.transaction():
                await self._write_everything(storage, "t2")
                async with storage.transaction():  # nested: joins the outer one
                    await storage.vectors("ents").delete(["base"])
                raise RuntimeError("fail the document")
        with pytest.raises(RuntimeError):
            await asyncio.wait_for(body(), 10)
        assert not any(await self._present(storage, "t2"))
        hits = await storage.vectors("ents").query(np.ones(3), 5)
        assert [h.id for h in hits] == ["base"]

    async def test_rollback_after_searching_inside_the_transaction(self, storage):
        vs = storage.vectors("ents")
        await vs.upsert(["base"], np.array([[1.0, 0.0]]), [{}])
        with pytest.raises(RuntimeError):
            async with storage.transaction():
                await vs.upsert(["tmp"], np.array([[1.0, 0.1]]), [{}])
                await vs.delete(["base"])
                await vs.query(np.array([1.0, 0.0]), 5)  # may load vectors now
                raise RuntimeError
        assert [h.id for h in await vs.query(np.array([1.0, 0.0]), 5)] == ["base"]
        await vs.upsert(["later"], np.array([[0.0, 1.0]]), [{}])
        assert [h.id for h in await vs.query(np.array([0.0, 1.0]), 5)] == ["later", "base"]

    async def test_other_tasks_wait_and_keep_their_writes(self, storage):
        inside, release = asyncio.Event(), asyncio.Event()
        await storage.kv("docs").upsert({"before": {}})

        async def doomed():
            async with storage.transaction():
                await storage.kv("docs").upsert({"doomed": {}})
                inside.set()
                await release.wait()
                raise RuntimeError

        owner = asyncio.create_task(doomed())
        await inside.wait()
        assert await asyncio.wait_for(storage.kv("docs").get("before"), 5) == {}  # reads go on
        writer = asyncio.create_task(storage.kv("docs").upsert({"other": {}}))
        await asyncio.sleep(0.05)
        assert not writer.done()  # waits for the transaction
        release.set()
        with pytest.raises(RuntimeError):
            await owner
        await asyncio.wait_for(writer, 5)
        assert await storage.kv("docs").missing(["doomed", "other"]) == {"doomed"}

    async def test_tasks_started_inside_join_the_transaction(self, storage):
        async def body():
            async with storage.transaction():
                await asyncio.gather(storage.kv("docs").upsert({"g1": {}}),
                                     storage.graph.upsert_nodes({"g2": {}}),
                                     self._write_everything(storage, "g3"))
        await asyncio.wait_for(body(), 10)
        assert await storage.kv("docs").get("g1") == {}
        assert all(await self._present(storage, "g3"))


class StorageConformance(KVStoreConformance, MetaConformance, VectorStoreConformance,
                         GraphStoreConformance, DocStatusConformance, LexicalConformance,
                         TransactionConformance):
    """Every conformance test; subclass it and override ``storage``."""
