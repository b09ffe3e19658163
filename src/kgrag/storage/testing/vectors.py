"""Conformance of the vector stores: upsert, search against brute force, delete."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgrag.errors import StorageError
from kgrag.storage.base import Storage, VectorStore
from kgrag.storage.testing.common import PROPERTY, StorageFixture, fresh, unit


class VectorStoreConformance(StorageFixture):
    async def test_vectors_query_ranks_by_cosine(self, storage: Storage) -> None:
        vs = storage.vectors("ents")
        await vs.upsert(
            ["x", "y", "xy"],
            np.array([[2, 0], [0, 3], [1, 1]], float),
            [{"n": "x"}, {"n": "y"}, {"n": "xy"}],
        )
        hits = await vs.query(np.array([1.0, 0.1]), top_k=2)
        assert [h.id for h in hits] == ["x", "xy"]
        assert hits[0].meta == {"n": "x"}
        assert hits[0].score == pytest.approx(1 / np.hypot(1, 0.1), abs=1e-5)
        assert await vs.count() == 3

    async def test_vectors_ids_list_what_is_stored(self, storage: Storage) -> None:
        vs = storage.vectors("ents")
        assert await vs.ids() == []
        await vs.upsert(["b", "a", "c"], np.eye(3), [{}, {}, {}])
        await vs.delete(["c"])
        assert await vs.ids() == ["a", "b"]

    async def test_vectors_are_normalised(self, storage: Storage) -> None:
        vs = storage.vectors("ents")
        await vs.upsert(["a"], np.array([[3.0, 4.0]]), [{}])
        got = await vs.get_vectors(["a", "missing"])
        assert list(got) == ["a"]
        np.testing.assert_allclose(got["a"], [0.6, 0.8], atol=1e-3)

    async def test_vectors_threshold_filters(self, storage: Storage) -> None:
        vs = storage.vectors("ents")
        await vs.upsert(["a", "b"], np.array([[1.0, 0.0], [0.0, 1.0]]), [{}, {}])
        hits = await vs.query(np.array([1.0, 0.2]), top_k=5, threshold=0.5)
        assert [h.id for h in hits] == ["a"]

    async def test_vectors_follow_updates_after_a_query(self, storage: Storage) -> None:
        vs = storage.vectors("ents")
        await vs.upsert(["a", "b"], np.array([[1.0, 0.0], [0.0, 1.0]]), [{}, {}])
        assert (await vs.query(np.array([1.0, 0.0]), 1))[0].id == "a"
        await vs.upsert(["b"], np.array([[1.0, 0.01]]), [{"v": 2}])
        await vs.delete(["a"])
        hits = await vs.query(np.array([1.0, 0.0]), 5)
        assert [h.id for h in hits] == ["b"] and hits[0].meta == {"v": 2}
        assert await vs.get_metas(["a", "b"]) == {"b": {"v": 2}}

    async def test_vectors_dimension_mismatch_is_refused(self, storage: Storage) -> None:
        vs = storage.vectors("ents")
        await vs.upsert(["a"], np.ones((1, 4)), [{}])
        with pytest.raises(StorageError, match="dimension"):
            await vs.upsert(["b"], np.ones((1, 5)), [{}])
        with pytest.raises(StorageError, match="dimension"):
            await vs.query(np.ones(3), 1)
        assert await vs.count() == 1

    async def test_vectors_empty_namespace(self, storage: Storage) -> None:
        vs = storage.vectors("nothing")
        assert await vs.query(np.ones(4), 3) == []
        assert await vs.count() == 0 and await vs.get_vectors(["a"]) == {}

    @PROPERTY
    @given(
        ops=st.lists(
            st.tuples(
                st.sampled_from(["upsert", "delete", "query"]),
                st.lists(st.integers(0, 15), min_size=1, max_size=6),
                st.integers(0, 2**32 - 1),
            ),
            min_size=1,
            max_size=12,
        ),
        top_k=st.integers(1, 8),
        threshold=st.none() | st.floats(-0.5, 0.8),
    )
    async def test_vectors_match_brute_force(
        self,
        storage: Storage,
        ops: list[tuple[str, list[int], int]],
        top_k: int,
        threshold: float | None,
    ) -> None:
        vs = storage.vectors(fresh("vec"))
        ref: dict[str, np.ndarray] = {}  # the reference model: id -> unit vector
        for op, keys, seed in ops:
            ids = [f"v{k}" for k in dict.fromkeys(keys)]
            rows = np.random.default_rng(seed).standard_normal((len(ids), 6))
            if op == "upsert":
                await vs.upsert(ids, rows, [{"id": i} for i in ids])
                ref.update(zip(ids, unit(rows), strict=False))
            elif op == "delete":
                await vs.delete(ids)
                for i in ids:
                    ref.pop(i, None)
            await _check_brute_force(vs, ref, rows[0], top_k, threshold)


async def _check_brute_force(
    vs: VectorStore,
    ref: dict[str, np.ndarray],
    query: np.ndarray,
    top_k: int,
    threshold: float | None,
) -> None:
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
