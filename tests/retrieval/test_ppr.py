"""The ppr mode on a hand-built graph whose answer chunk only the graph reaches.

The question names "Optica Nova"; the chunk saying where its publisher
sits ("Lumen Institute ... Lyon") shares no word with the question, so
dense and BM25 search cannot find it: only the walk Optica Nova ->
Lumen Institute -> that chunk can.
"""

from __future__ import annotations

import numpy as np
import pytest

from kgrag.ingest.ids import entity_vector_id
from kgrag.knowledge.walk.matrix import EdgeWeights, PPRGraph, cached_graph, question_keys
from kgrag.llm.embedding import EmbeddingService
from kgrag.llm.fake import FakeEmbeddingProvider
from kgrag.llm.ledger import Ledger
from kgrag.retrieval import QueryEngine, QueryParam
from kgrag.retrieval.modes.ppr import PPRSettings, seed_vector
from kgrag.storage.sqlite import memory_storage
from tests.retrieval.ppr_corpus import ENTITIES, QUESTION, cid, keys, write_corpus


async def test_direct_search_cannot_find_the_answer_chunk(ppr_engine):
    data = await ppr_engine.query_data(QUESTION, QueryParam(mode="naive", chunk_top_k=3))
    assert "answer" not in keys(data)


async def test_graph_is_cached_and_rebuilt_when_counts_change(ppr_engine):
    storage = ppr_engine.services.storage
    first, _ = await cached_graph(storage)
    again, rebuilt = await cached_graph(storage)
    assert again is first and not rebuilt
    await storage.graph.upsert_nodes({"Marseille": {"source_ids": [cid("answer")]}})
    fresh, rebuilt = await cached_graph(storage)
    assert rebuilt and "Marseille" in fresh.entity_index


async def test_chunks_only_index_falls_back_to_direct_order(tmp_path):
    storage = memory_storage(tmp_path)
    await storage.open()
    embed = EmbeddingService(FakeEmbeddingProvider(dim=256), ledger=Ledger())
    await write_corpus(storage, embed, entities={}, relations={})
    eng = QueryEngine(storage, None, embed)
    param = dict(chunk_top_k=3, ll_keywords=["Optica Nova"])
    ppr = await eng.query_data(QUESTION, QueryParam(mode="ppr", **param))
    naive = await eng.query_data(QUESTION, QueryParam(mode="naive", **param))
    await storage.close()
    assert keys(ppr) == keys(naive) and ppr["entities"] == []


def tiny_graph() -> PPRGraph:
    """Entities a, b (nodes 0-1), chunks c, d, e (2-4): a-b (weight 1), a-c, b-d; e isolated."""
    return PPRGraph(
        ["a", "b"],
        ["c", "d", "e"],
        np.array([[0, 1]]),
        np.array([1.0]),
        np.array([[0, 2], [1, 3]]),
        np.zeros(2),
    )


def dense(g: PPRGraph, weights: EdgeWeights) -> np.ndarray:
    t = g.transition(weights)
    out = np.zeros((g.size, g.size))
    for u in range(g.size):
        for j in range(t.indptr[u], t.indptr[u + 1]):
            assert t.src[j] == u
            out[u, t.dst[j]] = t.prob[j]
    return out


def test_walk_solves_the_pagerank_equation():
    g = tiny_graph()
    p_matrix = dense(g, EdgeWeights())
    assert np.allclose(p_matrix[:4].sum(axis=1), 1.0) and p_matrix[4].sum() == 0
    assert np.isclose(p_matrix[0, 1], np.log(2) / (1 + np.log(2)))
    s = np.array([1.0, 0, 0, 0, 0])
    p = g.walk(s, 0.5, tol=1e-12, max_iter=500)
    exact = np.linalg.solve(np.eye(5) - 0.5 * p_matrix.T, 0.5 * s)
    assert np.allclose(p, exact, atol=1e-9) and abs(p.sum() - 1) < 1e-9
    assert p[2] > p[3] > 0 and p[4] == 0


def test_leaf_weight_steers_chunks_away_from_single_chunk_entities():
    g = tiny_graph()
    p_matrix = dense(g, EdgeWeights(leaf=0.0))
    assert p_matrix[2].sum() == 0 and p_matrix[0, 2] == 1 / (1 + np.log(2))
    assert g.transition(EdgeWeights(leaf=0.0)).dangling.tolist() == [False, False, True, True, True]


def test_seed_groups_are_normalised_and_weighted():
    g = tiny_graph()
    s = seed_vector(
        g, {0: 2.0, 1: 2.0}, {2: 1.0, 3: 3.0}, PPRSettings(chunk_weight=0.5, specificity=0)
    )
    assert np.allclose(s, [0.5, 0.5, 0.125, 0.375, 0])
    assert np.allclose(tiny_graph().entity_chunks, [1, 1])


def test_names_match_literally_in_latin_and_cjk():
    assert {"optica nova", "nova"} <= question_keys(QUESTION.replace("?", ""))
    assert "泡泡堂" in question_keys("《泡泡堂》是谁开发的？")


@pytest.mark.parametrize("batch", [2, 5000])
async def test_aboutness_is_the_cosine_of_entity_and_chunk_vectors(ppr_engine, monkeypatch, batch):
    from kgrag.knowledge.walk import rows as walk_rows

    monkeypatch.setattr(walk_rows, "BATCH", batch)
    storage = ppr_engine.services.storage
    graph = PPRGraph.from_walk(await walk_rows.build(storage, 0))
    ents = await storage.vectors("entities").get_vectors(
        [entity_vector_id(n) for n in graph.entities]
    )
    chunks = await storage.vectors("chunks").get_vectors(graph.chunks)
    n_e = len(graph.entities)
    assert len(graph.ec_sim) == len(graph.ec_pairs) == sum(len(v) for v in ENTITIES.values())
    for (e, c), sim in zip(graph.ec_pairs, graph.ec_sim, strict=False):
        expected = float(ents[entity_vector_id(graph.entities[e])] @ chunks[graph.chunks[c - n_e]])
        assert sim == pytest.approx(expected, abs=1e-5)


def test_names_sharing_a_key_are_joined_and_matched_together():
    from kgrag.knowledge.walk.graph import Rows, assemble

    names = ["ABC", "Big Hero 6", "Big Hero 6 (film)", "Big Hero 6 (game)", "Zed (band)", "abc"]
    g = PPRGraph.from_walk(assemble(0, Rows(names, [[] for _ in names], [])))
    assert g.ee_pairs.tolist() == [[0, 5], [1, 2], [1, 3]]  # "abc" and "big hero 6" keys
    assert g.ee_weights.tolist() == [3.0, 3.0, 3.0]
    assert g.match_names("Who made Big Hero 6 and ABC?") == [1, 2, 3, 0, 5]
    assert g.match_names("Did Zed play?") == [4] and g.degree(1) == 2
