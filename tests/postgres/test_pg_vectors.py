"""The pgvector store beyond the conformance suite: the HNSW path, wire format, races."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from kgrag.storage.postgres.vector_index import EXACT_ROWS, search_sql
from kgrag.storage.postgres.vectors import namespaces, pack
from tests.support.postgres import until_waiting_on_lock


def _unit32(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


async def _table(storage, namespace: str) -> str:
    async with storage.db.connection() as conn:
        cur = await conn.execute("SELECT id FROM vector_spaces WHERE ns = %s", (namespace,))
        return f"vec_{(await cur.fetchone())[0]}"


async def _plan_text(storage, sql: str, query: np.ndarray) -> str:
    from kgrag.storage.postgres.vectors import _adapt

    async with storage.db.connection() as conn:
        _adapt(conn)
        cur = await conn.execute("EXPLAIN " + sql, (pack(query[None, :])[0], 10))
        return "\n".join(row[0] for row in await cur.fetchall())


@pytest.fixture
async def big(pg_storage):
    """A namespace above EXACT_ROWS (12,000 clustered 8-d vectors), written in one upsert."""
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((40, 8))
    rows = centres[rng.integers(0, 40, 12_000)] + 0.3 * rng.standard_normal((12_000, 8))
    ids = [f"v{i:05d}" for i in range(len(rows))]
    vs = pg_storage.vectors("big")
    await vs.upsert(ids, rows, [{"i": i} for i in range(len(ids))])
    return vs, ids, _unit32(rows), rng


async def test_pg_vectors_large_namespace_searches_the_hnsw_index(pg_storage, big):
    vs, _, unit, rng = big
    table = await _table(pg_storage, "big")
    query = unit[0]
    assert f"{table}_hnsw" in await _plan_text(pg_storage, search_sql(table, False), query)
    assert f"{table}_hnsw" not in await _plan_text(pg_storage, search_sql(table, True), query)
    async with pg_storage.db.connection() as conn:
        cur = await conn.execute("SELECT indexed FROM vector_spaces WHERE ns = 'big'")
        assert (await cur.fetchone())[0] is True  # so queries take the HNSW path
    found = total = 0
    near = unit[rng.integers(0, len(unit), 10)] + 0.1 * rng.standard_normal((10, 8))
    for q in _unit32(near):  # queries near the data, as a question's embedding is
        hits = await vs.query(q, 20)
        best = set(np.argsort(-(unit @ q), kind="stable")[:20])
        found += len({int(h.id[1:]) for h in hits} & best)
        total += 20
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert hits[0].meta == {"i": int(hits[0].id[1:])}
    assert found / total >= 0.95


async def test_pg_vectors_deleted_rows_never_cut_a_result_short(pg_storage, big):
    vs, ids, unit, _ = big
    query = unit[123]
    nearest = np.argsort(-(unit @ query), kind="stable")
    await vs.delete([ids[i] for i in nearest[:100]])  # dead rows stay in the graph until vacuum
    hits = await vs.query(query, 40)
    assert len(hits) == 40
    got = {int(h.id[1:]) for h in hits}
    assert not got & set(nearest[:100].tolist())
    assert len(got & set(nearest[100:140].tolist())) >= 36


async def test_pg_vectors_round_trip_exactly_across_batches(pg_storage):
    vs = pg_storage.vectors("many")
    rows = np.random.default_rng(3).standard_normal((4500, 5))
    ids = [f"id{i}" for i in range(len(rows))]
    await vs.upsert(ids, rows, [{} for _ in ids])
    got = await vs.get_vectors([*reversed(ids), "missing"])
    assert sorted(got) == sorted(ids)
    assert all(v.dtype == np.float32 and v.shape == (5,) for v in got.values())
    np.testing.assert_array_equal(np.stack([got[i] for i in ids]), _unit32(rows))
    assert await vs.ids() == sorted(ids)


async def test_pg_vectors_zero_vector_scores_zero(pg_storage):
    vs = pg_storage.vectors("zero")
    await vs.upsert(["z", "x"], np.array([[0.0, 0.0], [1.0, 0.0]]), [{}, {}])
    hits = await vs.query(np.array([-1.0, 0.0]), 5)
    assert [(h.id, h.score) for h in hits] == [("z", 0.0), ("x", -1.0)]


async def test_pg_vectors_namespaces_are_listed_sorted(pg_storage):
    for name in ["é", "b", "B", "a"]:
        await pg_storage.vectors(name).upsert(["k"], np.ones((1, 3)), [{}])
    await pg_storage.vectors("b").upsert(["k2"], np.ones((1, 3)), [{}])
    assert await pg_storage.db.read(namespaces) == sorted(["é", "b", "B", "a"])


async def _index_defs(storage, namespace: str) -> list[str]:
    table = await _table(storage, namespace)
    async with storage.db.connection() as conn:
        cur = await conn.execute("SELECT indexdef FROM pg_indexes WHERE tablename = %s", (table,))
        return [row[0] for row in await cur.fetchall()]


async def test_pg_vectors_the_write_reaching_the_exact_limit_builds_the_index(pg_storage):
    vs, rng = pg_storage.vectors("growing"), np.random.default_rng(5)
    first = EXACT_ROWS - 1
    await vs.upsert([f"v{i}" for i in range(first)], rng.standard_normal((first, 8)), [{}] * first)
    assert not any("hnsw" in d for d in await _index_defs(pg_storage, "growing"))
    await vs.upsert(["w1", "w2"], rng.standard_normal((2, 8)), [{}, {}])
    assert any(
        "USING hnsw (vec vector_ip_ops)" in d for d in await _index_defs(pg_storage, "growing")
    )
    await vs.upsert(["w3"], rng.standard_normal((1, 8)), [{}])  # already indexed: nothing new
    assert await vs.count() == EXACT_ROWS + 2


async def test_pg_vectors_two_transactions_create_one_namespace(pg_storage):
    vs = pg_storage.vectors("raced")
    first_wrote, release = asyncio.Event(), asyncio.Event()

    async def first():
        async with pg_storage.transaction():
            await vs.upsert(["a"], np.array([[1.0, 0.0, 0.0]]), [{"by": 1}])
            first_wrote.set()
            await release.wait()

    async def second():
        await first_wrote.wait()
        async with pg_storage.transaction():
            await vs.upsert(["b"], np.array([[0.0, 1.0, 0.0]]), [{"by": 2}])

    tasks = [asyncio.create_task(first()), asyncio.create_task(second())]
    await until_waiting_on_lock(pg_storage, "INSERT INTO vector_spaces")
    release.set()
    await asyncio.gather(*tasks)
    assert await vs.ids() == ["a", "b"]
    assert await pg_storage.db.read(namespaces) == ["raced"]
    assert (await vs.query(np.array([0.0, 1.0, 0.0]), 1))[0].meta == {"by": 2}


async def test_pg_vectors_a_deferred_index_is_built_after_the_bulk_load(pg_storage):
    from kgrag.storage.postgres.vector_index import build_indexes
    from kgrag.storage.postgres.vectors import PgVectorStore

    vs = PgVectorStore(pg_storage.db, "bulk", defer_index=True)
    rng, n = np.random.default_rng(9), EXACT_ROWS + 5
    await vs.upsert([f"v{i}" for i in range(n)], rng.standard_normal((n, 8)), [{}] * n)
    assert not any("hnsw" in d for d in await _index_defs(pg_storage, "bulk"))
    assert await pg_storage.db.write(build_indexes) == ["bulk"]
    assert any("USING hnsw" in d for d in await _index_defs(pg_storage, "bulk"))
    assert await pg_storage.db.write(build_indexes) == []  # nothing left to build


async def _wide(pg_storage, namespace: str, dim: int, rows: int, index_rows: int):
    """A namespace of ``dim`` dimensions written in three upserts; the second crosses the limit."""
    from kgrag.storage.postgres.vector_index import IndexOptions
    from kgrag.storage.postgres.vectors import PgVectorStore

    vs = PgVectorStore(pg_storage.db, namespace, index=IndexOptions(rows=index_rows))
    rng = np.random.default_rng(dim)
    centres = rng.standard_normal((12, dim))
    data = centres[rng.integers(0, 12, rows)] + 0.5 * rng.standard_normal((rows, dim))
    ids = [f"w{i:04d}" for i in range(rows)]
    for part in (
        slice(0, index_rows - 10),
        slice(index_rows - 10, rows - 5),
        slice(rows - 5, rows),
    ):
        await vs.upsert(ids[part], data[part], [{"i": i} for i in range(rows)][part])
    return vs, _unit32(data), rng


async def _matches_exact_search(vs, unit: np.ndarray, rng, k: int = 10) -> float:
    """Recall@k of ``vs`` against an exact scan; scores are the exact cosines, best first."""
    found = 0
    near = unit[rng.integers(0, len(unit), 8)] + 0.2 * rng.standard_normal((8, unit.shape[1]))
    for q in _unit32(near):
        hits = await vs.query(q, k)
        exact = unit @ q
        found += len({int(h.id[1:]) for h in hits} & set(np.argsort(-exact)[:k].tolist()))
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        for hit in hits:
            assert hit.score == pytest.approx(float(exact[int(hit.id[1:])]), abs=1e-5)
    return found / (8 * k)


async def test_pg_vectors_3072_dimensions_get_a_halfvec_index_and_keep_working(pg_storage):
    # pgvector indexes `vector` up to 2,000 dimensions: text-embedding-3-large's 3,072
    # used to fail the write that crossed the limit, and every write after it
    vs, unit, rng = await _wide(pg_storage, "wide", 3072, 260, index_rows=200)
    assert await vs.count() == 260
    defs = await _index_defs(pg_storage, "wide")
    assert any("USING hnsw (((vec)::halfvec(3072)) halfvec_ip_ops)" in d for d in defs), defs
    assert any("m='16'" in d and "ef_construction='64'" in d for d in defs), defs
    table, query = await _table(pg_storage, "wide"), pack(unit[:1])[0]
    assert await _matches_exact_search(vs, unit, rng) == 1.0  # small: a sequential scan
    async with pg_storage.transaction():  # the reads join it: the index, however small
        await pg_storage.db.write(_execute, "SET LOCAL enable_seqscan = off")
        plan = await pg_storage.db.read(
            _execute, "EXPLAIN " + search_sql(table, False, 3072), {"q": query, "k": 10}
        )
        assert f"{table}_hnsw" in "\n".join(row[0] for row in plan)
        assert await _matches_exact_search(vs, unit, rng) >= 0.9
    await vs.upsert(["late"], unit[:1], [{}])  # later writes join the index
    assert await vs.count() == 261


async def _execute(conn, sql: str, params=None) -> list:
    from kgrag.storage.postgres.vectors import _adapt

    _adapt(conn)
    cur = await conn.execute(sql, params)
    return await cur.fetchall() if cur.description else []


async def test_pg_vectors_beyond_4000_dimensions_are_searched_exactly(pg_storage):
    vs, unit, rng = await _wide(pg_storage, "wider", 4100, 60, index_rows=30)
    assert await vs.count() == 60
    assert not any("hnsw" in d for d in await _index_defs(pg_storage, "wider"))
    assert await _matches_exact_search(vs, unit, rng) == 1.0


async def test_pg_vectors_index_parameters_come_from_the_options(pg_storage):
    from kgrag.storage.postgres.vector_index import IndexOptions
    from kgrag.storage.postgres.vectors import PgVectorStore

    options = IndexOptions(rows=50, m=8, ef_construction=40, ef_search=300)
    vs = PgVectorStore(pg_storage.db, "tuned", index=options)
    rows = np.random.default_rng(2).standard_normal((60, 16))
    await vs.upsert([f"t{i}" for i in range(60)], rows, [{}] * 60)
    defs = await _index_defs(pg_storage, "tuned")
    assert any("m='8'" in d and "ef_construction='40'" in d for d in defs), defs

    async def ef_search(conn):
        await vs._plan(conn, 10)
        return (await (await conn.execute("SHOW hnsw.ef_search")).fetchone())[0]

    assert await pg_storage.db.read(ef_search) == "300"
