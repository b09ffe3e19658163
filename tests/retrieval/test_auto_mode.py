"""Mode ``auto``: the per-question choice between chunk search and the graph walk, and their fusion.

The end-to-end tests use the ppr corpus (:mod:`query.ppr_corpus`) in a
real in-memory SQLite store, marked as built by the NLP extractor (where
``auto`` routes per question), beside filler passages that each name an
entity of their own: with 40 of them the names reach 2% of the index, as
in a collection of passages; alone, its six chunks and seven names reach
21% of it, as a novel's do.
"""

from __future__ import annotations

import numpy as np
import pytest

from kgrag.ingest.ids import entity_vector_id
from kgrag.llm.embedding import EmbeddingService
from kgrag.llm.fake import FakeEmbeddingProvider
from kgrag.llm.ledger import Ledger
from kgrag.retrieval import QueryEngine, QueryParam, render_trace
from kgrag.retrieval.modes import auto as auto_route
from kgrag.retrieval.modes.auto import AutoSettings, choose_route, fuse_chunks, reach_weight
from kgrag.retrieval.modes.auto_signals import Signals, name_reach
from kgrag.retrieval.records import ChunkHit
from kgrag.storage.sqlite import memory_storage
from tests.retrieval.ppr_corpus import QUESTION, keys, write_corpus

NO_NAME = "Which cafeteria serves soup on Fridays?"
TWO_NAMES = "Is the Lumen Institute in Lyon?"


def hits(ids: str, route: str) -> list[ChunkHit]:
    return [ChunkHit(i, 1.0 / (n + 1), route) for n, i in enumerate(ids.split())]


# -- the route -------------------------------------------------------------------


def test_a_question_naming_no_entity_routes_to_chunk_search():
    route = choose_route(Signals((), 0.01))
    assert route.name == "chunks" and route.graph_weight == 0.0
    assert "names no entity" in route.reason


def test_a_question_naming_entities_uses_the_graph_on_passage_sized_chunks():
    route = choose_route(Signals(("Lumen Institute", "Lyon"), 0.01))
    assert route.name == "walk+path" and route.graph_weight == 1.0
    assert [p for p, _ in route.parts] == ["walk", "path"]
    assert [w for _, w in route.parts] == pytest.approx([0.75, 0.25])
    assert "names 2 entities (Lumen Institute, Lyon)" in route.reason
    walk_only = choose_route(Signals(("Lyon",), 0.01), AutoSettings(path_weight=0))
    assert walk_only.parts == (("walk", 1.0),)


def test_far_reaching_names_route_to_chunk_search_whatever_the_question_names():
    route = choose_route(Signals(("Scrooge", "Marley", "Fezziwig", "Belle"), 0.18))
    assert route.name == "chunks"
    assert "names reach 18.0% of the chunks" in route.reason


def test_the_graph_weight_falls_linearly_between_low_and_high_reach():
    cfg = AutoSettings(low_reach=0.04, high_reach=0.12)
    weights = [reach_weight(r, cfg) for r in (0.0, 0.04, 0.06, 0.08, 0.12, 0.5)]
    assert weights == pytest.approx([1.0, 1.0, 0.75, 0.5, 0.0, 0.0])
    route = choose_route(Signals(("Lyon",), 0.06), cfg)
    assert route.name == "chunks+walk"
    assert [w for _, w in route.parts] == pytest.approx([0.25, 0.75])


def test_unnamed_weight_gives_unnamed_questions_a_share_of_the_walk():
    route = choose_route(Signals((), 0.01), AutoSettings(unnamed_weight=0.5))
    assert route.parts == (("chunks", 0.5), ("walk", 0.5))


# -- the fusion ------------------------------------------------------------------


def test_fusion_ranks_by_weighted_reciprocal_rank():
    chunks, walked = hits("a b c", "vector"), hits("c d a", "ppr")
    fused = fuse_chunks([(chunks, 0.2), (walked, 0.8)], k=1.0, limit=10)
    # a: 0.2/2 + 0.8/4, b: 0.2/3, c: 0.2/4 + 0.8/2, d: 0.8/3
    assert [c.id for c in fused] == ["c", "a", "d", "b"]
    assert [c.route for c in fused] == ["vector+ppr", "vector+ppr", "ppr", "vector"]
    assert fused[0].score == pytest.approx(0.2 / 4 + 0.8 / 2)


def test_fusion_ties_go_to_the_earlier_ranking_and_the_order_is_deterministic():
    chunks, walked = hits("a b", "lexical"), hits("x y", "ppr")
    fused = [c.id for c in fuse_chunks([(chunks, 0.5), (walked, 0.5)], k=1.0, limit=10)]
    assert fused == ["a", "x", "b", "y"]
    again = fuse_chunks([(chunks, 0.5), (walked, 0.5)], k=1.0, limit=10)
    assert fused == [c.id for c in again]


def test_fusion_keeps_limit_chunks_and_leaves_its_inputs_alone():
    chunks, walked = hits("a b c", "vector"), hits("d e f", "ppr")
    fused = fuse_chunks([(chunks, 0.5), (walked, 0.5)], k=1.0, limit=2)
    assert [c.id for c in fused] == ["a", "d"]
    assert chunks[0].route == "vector" and chunks[0].score == 1.0


def test_fusion_reads_only_the_first_limit_of_each_ranking():
    chunks, walked = hits("a b", "vector"), hits("x y b", "ppr")
    fused = fuse_chunks([(chunks, 0.5), (walked, 0.5)], k=1.0, limit=2)
    assert [c.route for c in fused] == ["vector", "ppr"]  # b at the walk's third rank: unread


def test_name_reach_is_the_link_weighted_share_of_chunks_an_entity_cites():
    # entities citing 1, 1 and 4 of 8 chunks: (1 + 1 + 16) / 6 links / 8 chunks
    assert name_reach(np.array([1, 1, 4]), 8) == pytest.approx(18 / 6 / 8)
    assert name_reach(np.array([1] * 50), 50) == pytest.approx(1 / 50)  # each name its passage
    assert (
        name_reach(np.array([], dtype=np.int64), 8) == 0.0 and name_reach(np.array([2]), 0) == 0.0
    )


# -- end to end ------------------------------------------------------------------


async def write_fillers(storage, embed, n: int) -> None:
    """``n`` passages, each the one chunk of an entity of its own."""
    rows = {
        f"chunk-filler-{i}": {
            "content": f"Record {i} of the ledger lists Item{i} among the stored crates.",
            "tokens": 11,
            "doc_id": f"doc-filler-{i}",
            "order": 0,
            "file_path": f"filler{i}",
        }
        for i in range(n)
    }
    ids = list(rows)
    texts = [rows[i]["content"] for i in ids]
    metas = [{"doc_id": rows[i]["doc_id"], "file_path": rows[i]["file_path"]} for i in ids]
    await storage.kv("text_chunks").upsert(rows)
    await storage.vectors("chunks").upsert(ids, await embed.embed(texts), metas)
    await storage.lexical.add(dict(zip(ids, texts, strict=True)))
    nodes = {
        f"Item{i}": {"entity_type": "Thing", "description": texts[i], "source_ids": [ids[i]]}
        for i in range(n)
    }
    await storage.graph.upsert_nodes(nodes)
    await storage.vectors("entities").upsert(
        [entity_vector_id(name) for name in nodes],
        await embed.embed(list(nodes)),
        [{"name": name} for name in nodes],
    )


async def _engine(tmp_path, fillers: int = 40):
    storage = memory_storage(tmp_path)
    await storage.open()
    embed = EmbeddingService(FakeEmbeddingProvider(dim=256), ledger=Ledger())
    await write_corpus(storage, embed)
    await write_fillers(storage, embed, fillers)
    await storage.set_meta("extractors", ["nlp"])
    return QueryEngine(storage, None, embed)


@pytest.fixture
async def engine(tmp_path):
    eng = await _engine(tmp_path)
    yield eng
    await eng.services.storage.close()


def named(data) -> list[str]:
    """The entities of ``data`` in order, fillers (whose equal masses tie) left out."""
    return [e["entity_name"] for e in data["entities"] if not e["entity_name"].startswith("Item")]


def rrf(rankings: list[tuple[list[str], float]], limit: int) -> list[str]:
    """Weighted reciprocal-rank fusion written out: weight / (rank + 2), ties in first-seen order."""
    score: dict[str, float] = {}
    for ranking, weight in rankings:
        for rank, key in enumerate(ranking[:limit]):
            score[key] = score.get(key, 0.0) + weight / (rank + 2)
    first = {k: i for i, k in enumerate(score)}
    return sorted(score, key=lambda k: (-score[k], first[k]))[:limit]


async def test_a_named_entity_fuses_the_walk_and_the_path_search(engine):
    param = dict(chunk_top_k=4)
    auto = await engine.query_data(QUESTION, QueryParam(mode="auto", **param), trace=True)
    ppr = await engine.query_data(QUESTION, QueryParam(mode="ppr", **param))
    path = await engine.query_data(QUESTION, QueryParam(mode="path", **param))
    assert auto["mode"] == "auto" and auto["trace"]["auto"]["route"] == "walk+path"
    assert auto["trace"]["auto"]["names"] == ["Optica Nova"]
    assert keys(auto) == rrf([(keys(ppr), 0.75), (keys(path), 0.25)], 4)
    assert "answer" in keys(auto)  # reached through the graph only
    assert auto["paths"] == path["paths"]
    assert any(r["route"] == "auto/walk+path" for r in auto["trace"]["routes"])


async def test_without_the_path_search_a_named_entity_gets_the_walk(engine, monkeypatch):
    monkeypatch.setattr(auto_route, "SETTINGS", AutoSettings(path_weight=0))
    auto = await engine.query_data(QUESTION, QueryParam(mode="auto", chunk_top_k=4), trace=True)
    ppr = await engine.query_data(QUESTION, QueryParam(mode="ppr", chunk_top_k=4))
    assert auto["trace"]["auto"]["route"] == "walk"
    assert keys(auto) == keys(ppr)
    assert named(auto) == named(ppr)
    assert set(named(auto)[:2]) == {"Optica Nova", "Lumen Institute"}


async def test_auto_uses_chunk_search_for_a_question_naming_nothing(engine):
    auto = await engine.query_data(NO_NAME, QueryParam(mode="auto", chunk_top_k=3), trace=True)
    naive = await engine.query_data(NO_NAME, QueryParam(mode="naive", chunk_top_k=3))
    assert auto["trace"]["auto"]["route"] == "chunks" and auto["trace"]["auto"]["names"] == []
    assert keys(auto) == keys(naive) and auto["entities"] == []


async def test_auto_uses_the_graph_for_a_question_naming_two_entities(engine):
    auto = await engine.query_data(TWO_NAMES, QueryParam(mode="auto", chunk_top_k=3), trace=True)
    assert auto["trace"]["auto"]["route"] == "walk+path"
    assert sorted(auto["trace"]["auto"]["names"]) == ["Lumen Institute", "Lyon"]


async def test_the_trace_notes_the_route_and_why(engine):
    data = await engine.query_data(QUESTION, QueryParam(mode="auto"), trace=True)
    notes = [n["message"] for n in data["trace"]["notes"] if n["message"].startswith("auto:")]
    reach = (10 + 40) / (8 + 40) / (6 + 40)  # corpus: chunk counts 2, 1 x 6; fillers 1 x 40
    assert notes == [
        "auto: walk+path (graph weight 1.00): the question names 1 entity (Optica Nova); "
        f"names reach {reach:.1%} of the chunks"
    ]
    assert data["trace"]["auto"]["reach"] == round(reach, 4)
    assert data["trace"]["auto"]["weights"] == {"walk": 0.75, "path": 0.25}
    assert "note: auto: walk+path" in render_trace(data["trace"])


async def test_far_reaching_names_send_a_named_question_to_chunk_search(tmp_path):
    eng = await _engine(tmp_path, fillers=0)  # reach 21%
    try:
        auto = await eng.query_data(QUESTION, QueryParam(mode="auto", chunk_top_k=4), trace=True)
        naive = await eng.query_data(QUESTION, QueryParam(mode="naive", chunk_top_k=4))
    finally:
        await eng.services.storage.close()
    assert auto["trace"]["auto"]["route"] == "chunks"
    assert auto["trace"]["auto"]["reach"] == round(10 / 8 / 6, 4)
    assert keys(auto) == keys(naive) and "answer" not in keys(auto)


async def test_middling_reach_fuses_chunk_search_and_the_walk(tmp_path):
    eng = await _engine(tmp_path, fillers=12)  # reach 22 / 20 / 18 = 0.061: the walk weighs 0.74
    try:
        param = dict(chunk_top_k=4)
        auto = await eng.query_data(QUESTION, QueryParam(mode="auto", **param), trace=True)
        naive = await eng.query_data(QUESTION, QueryParam(mode="naive", **param))
        ppr = await eng.query_data(QUESTION, QueryParam(mode="ppr", **param))
    finally:
        await eng.services.storage.close()
    assert auto["trace"]["auto"]["route"] == "chunks+walk"
    walk = (0.12 - 22 / 20 / 18) / (0.12 - 0.04)
    assert auto["trace"]["auto"]["weights"] == {
        "chunks": round(1 - walk, 3),
        "walk": round(walk, 3),
    }
    assert keys(auto) == rrf([(keys(naive), 1 - walk), (keys(ppr), walk)], 4)
    assert "answer" in keys(auto)  # the walk's find
    assert named(auto) == named(ppr)


async def test_auto_on_an_index_built_with_a_chat_model_is_mix(tmp_path):
    eng = await _engine(tmp_path)
    try:
        await eng.services.storage.set_meta("extractors", ["llm"])
        data = await eng.query_data(QUESTION, QueryParam(mode="auto"))
    finally:
        await eng.services.storage.close()
    assert data["mode"] == "mix"
