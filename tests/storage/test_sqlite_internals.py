"""Unit tests of the SQLite backend's parts: matrix, codec, tokens, options."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgrag.errors import ConfigError
from kgrag.storage import open_storage
from kgrag.storage.base import Storage
from kgrag.storage.sqlite import codec, lexical, matrix, screen
from kgrag.storage.sqlite.kernels import top_positions
from kgrag.storage.sqlite.matrix import MatrixIndex


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(matrix, "BLOCK", 8)
    monkeypatch.setattr(matrix, "_FIRST", 2)


@settings(max_examples=60, deadline=None)
@given(
    ops=st.lists(st.tuples(st.booleans(), st.lists(st.integers(0, 40), max_size=12)), max_size=15)
)
def test_matrix_matches_dict_model(ops):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(matrix, "BLOCK", 8)
        mp.setattr(matrix, "_FIRST", 2)
        index, model = MatrixIndex(3), {}
        for is_upsert, keys in ops:
            ids = [str(k) for k in dict.fromkeys(keys)]
            if is_upsert:
                rows = np.random.default_rng(len(model)).standard_normal((len(ids), 3))
                index.upsert(ids, rows.astype(np.float32))
                model.update(zip(ids, rows.astype(np.float32), strict=False))
            else:
                index.delete(ids)
                for i in ids:
                    model.pop(i, None)
        assert len(index) == len(model)
        q = np.array([1.0, 0.5, -0.25], np.float32)
        got = dict(index.search(q, top_k=100))
        want = {i: float(np.clip(v @ q, -1, 1)) for i, v in model.items()}
        assert got.keys() == want.keys()
        for i in got:
            assert got[i] == pytest.approx(want[i], abs=1e-5)


def test_matrix_grows_by_blocks_without_copying_full_blocks(small_blocks):
    index = MatrixIndex(2)
    index.upsert([str(i) for i in range(3)], np.ones((3, 2), np.float32))
    assert [len(b) for b in index._blocks] == [4]
    index.upsert([str(i) for i in range(3, 20)], np.ones((17, 2), np.float32))
    assert [len(b) for b in index._blocks] == [8, 8, 8]
    first = index._blocks[0]
    index.upsert(["new"], np.ones((1, 2), np.float32))
    assert index._blocks[0] is first


def test_matrix_search_threshold_and_order():
    index = MatrixIndex(2)
    index.upsert(["a", "b", "c"], np.array([[1, 0], [0.6, 0.8], [0, 1]], np.float32))
    assert [i for i, _ in index.search(np.array([1, 0], np.float32), 2)] == ["a", "b"]
    assert index.search(np.array([1, 0], np.float32), 5, threshold=0.5)[-1][0] == "b"
    assert index.search(np.array([1, 0], np.float32), 0) == []


def test_codec_compresses_only_large_values():
    small = {"k": "v"}
    assert isinstance(codec.encode(small), str)
    big = {"content": "A Christmas Carol. " * 200}
    cell = codec.encode(big)
    assert isinstance(cell, bytes) and len(cell) < len(codec.dumps(big)) / 3
    assert codec.decode(cell) == big and codec.decode(codec.encode(small)) == small
    random_text = {"x": np.random.default_rng(0).bytes(2000).hex()}
    assert codec.decode(codec.encode(random_text)) == random_text


def test_tokenize_segments_chinese_and_lowercases_latin():
    assert lexical.tokenize("Scrooge SAID") == "scrooge said"
    tokens = lexical.tokenize("刘备在赤壁").split()
    assert "刘备" in tokens and "赤壁" in tokens
    assert lexical.query_terms('say "hi" (now) hi') == ["say", "hi", "now"]
    assert lexical.match_expression(['a"b']) == '"a""b"'


def test_registry_builds_both_variants(tmp_path):
    sqlite = open_storage("sqlite", tmp_path)
    memory = open_storage("memory", tmp_path)
    assert sqlite.name == "sqlite" and memory.name == "memory" and memory.path is None
    members = [m for m in vars(Storage) if not m.startswith("_")]
    assert all(hasattr(sqlite, m) for m in members) and "transaction" in members


def test_unknown_options_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="vector_dtpye"):
        open_storage("sqlite", tmp_path, vector_dtpye="float16")
    with pytest.raises(ConfigError, match="vector_dtype"):
        open_storage("sqlite", tmp_path, vector_dtype="int8")


@pytest.fixture
def few_candidates(monkeypatch):
    """Screen searches re-score only a handful of rows, so the screen really screens."""
    monkeypatch.setattr(screen, "MIN_CANDIDATES", 3)
    monkeypatch.setattr(screen, "CANDIDATES_PER_HIT", 1)


def screened_rows(index: MatrixIndex) -> np.ndarray:
    scr = index._screen
    return np.concatenate(scr._blocks)[: len(index)]


@settings(max_examples=40, deadline=None)
@given(
    ops=st.lists(
        st.tuples(st.booleans(), st.lists(st.integers(0, 30), max_size=10)), min_size=1, max_size=12
    )
)
def test_screen_follows_every_write_and_row_move(ops):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(matrix, "BLOCK", 8)
        mp.setattr(matrix, "_FIRST", 2)
        mp.setattr(screen, "MIN_CANDIDATES", 3)
        mp.setattr(screen, "CANDIDATES_PER_HIT", 1)
        rng = np.random.default_rng(5)
        index, model = MatrixIndex(8, screen_rows=4), {}
        for is_upsert, keys in ops:
            ids = [str(k) for k in dict.fromkeys(keys)]
            if is_upsert:
                rows = rng.standard_normal((len(ids), 8)).astype(np.float32)
                rows /= np.linalg.norm(rows, axis=1, keepdims=True)
                index.upsert(ids, rows)
                model.update(zip(ids, rows, strict=False))
            else:
                index.delete(ids)
                for i in ids:
                    model.pop(i, None)
            q = rng.standard_normal(8).astype(np.float32)
            for id_, score in index.search(q, 2):  # builds the screen once there are 4+ rows
                assert score == pytest.approx(float(np.clip(model[id_] @ q, -1, 1)), abs=1e-5)
        if index._screen is not None and len(index):
            full = np.stack([model[i] for i in index._ids])
            np.testing.assert_allclose(screened_rows(index), full @ index._screen.basis, atol=1e-5)


def test_screen_finds_the_neighbours_of_low_rank_data(few_candidates, monkeypatch):
    monkeypatch.setattr(screen, "MIN_CANDIDATES", 100)
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((3000, 12)) @ rng.standard_normal((12, 64))
    rows += 0.05 * rng.standard_normal(rows.shape)
    rows = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    ids = [f"r{i}" for i in range(3000)]
    exact, screened = MatrixIndex(64), MatrixIndex(64, screen_rows=1000)
    exact.upsert(ids, rows)
    screened.upsert(ids, rows)
    for q in rows[:20] + 0.1 * rng.standard_normal((20, 64)).astype(np.float32):
        q /= np.linalg.norm(q)
        assert screened.search(q, 10, 0.1) == exact.search(q, 10, 0.1)
    assert screened._screen is not None and screened._screen.basis.shape == (64, 16)


async def test_storage_option_turns_the_screen_on(tmp_path, few_candidates):
    s = open_storage("sqlite", tmp_path, vector_screen_rows=50)
    await s.open()
    rng = np.random.default_rng(4)
    vecs = rng.standard_normal((200, 3)) @ rng.standard_normal(
        (3, 16)
    )  # rank 3: a 4-d screen holds it
    await s.vectors("v").upsert([str(i) for i in range(200)], vecs, [{}] * 200)
    hits = await s.vectors("v").query(vecs[7], 3)
    assert hits[0].id == "7" and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert s.vectors("v")._index._screen is not None
    await s.close()


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(1, 20000),
    k=st.integers(1, 60),
    seed=st.integers(0, 2**32 - 1),
    levels=st.sampled_from([3, 50, 0]),
)
def test_top_positions_matches_a_full_sort(n, k, seed, levels):
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(n).astype(np.float32)
    if levels:  # many ties
        values = np.round(values * levels) / levels
    k = min(k, n)
    got = top_positions(values, k)
    assert len(set(got.tolist())) == k
    np.testing.assert_array_equal(np.sort(values[got]), np.sort(values)[n - k :])
