"""The forward push ranks as the exact walk does: on a small graph, a random one, and the ppr corpus."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from kgrag.knowledge.walk import pagerank
from kgrag.knowledge.walk.graph import Rows, assemble
from kgrag.knowledge.walk.matrix import EdgeWeights, PPRGraph
from kgrag.retrieval import QueryParam
from kgrag.retrieval.modes import ppr as ppr_mode
from kgrag.retrieval.modes.ppr import DEFAULT_EDGES, PUSH_EPS, PUSH_MIN_EDGES, _top
from tests.retrieval.ppr_corpus import QUESTION, keys
from tests.retrieval.test_ppr import tiny_graph


def random_graph(seed: int, entities: int = 300, chunks: int = 120) -> PPRGraph:
    """Zipf-like entity edges, one to four chunks per entity, random similarities."""
    rng = np.random.default_rng(seed)
    names = [f"e{i:04d}" for i in range(entities)]
    hubs = 1.0 / (np.arange(entities) + 3)
    a = rng.choice(entities, 2 * entities, p=hubs / hubs.sum())
    b = rng.integers(0, entities, 2 * entities)
    edges = [(names[x], names[y], float(rng.integers(1, 5))) for x, y in zip(a, b, strict=True)]
    ids = [f"c{j:04d}" for j in range(chunks)]
    sources = [[ids[j] for j in rng.integers(0, chunks, rng.integers(1, 5))] for _ in names]
    walk = assemble(0, Rows(names, sources, edges, chunks=ids))
    walk.sim = rng.uniform(0.0, 0.6, len(walk.ec)).astype(np.float32)
    return PPRGraph.from_walk(walk)


def seeds(g: PPRGraph, rng: np.random.Generator) -> np.ndarray:
    s = np.zeros(g.size)
    s[rng.choice(len(g.entities), 3, replace=False)] = rng.uniform(0.5, 2.0, 3)
    s[len(g.entities) + rng.choice(len(g.chunks), 5, replace=False)] = rng.uniform(0.1, 1.0, 5)
    return s


def test_push_converges_to_the_exact_solution_on_a_small_graph():
    g = tiny_graph()
    s = np.array([1.0, 0, 0, 0.5, 0])
    exact = g.walk(s, 0.5, tol=1e-14, max_iter=500)
    pushed = g.push(s, 0.5, EdgeWeights(), 1e-12)
    assert np.allclose(pushed, exact, atol=1e-9) and abs(pushed.sum() - 1) < 1e-9
    rough = g.push(s, 0.5, EdgeWeights(), 1e-2)
    assert not np.allclose(rough, exact, atol=1e-6)  # a loose push is only an estimate


def test_push_with_a_dangling_seed_returns_its_mass_to_the_seeds():
    g = tiny_graph()  # chunk e (node 4) has no edge
    s = np.array([0.0, 0, 0, 0, 1.0])
    assert np.allclose(g.push(s, 0.7, EdgeWeights(), 1e-12), s)
    s = np.array([1.0, 0, 0, 0, 1.0])
    assert np.allclose(
        g.push(s, 0.7, EdgeWeights(), 1e-12), g.walk(s, 0.7, tol=1e-14, max_iter=900)
    )


@pytest.mark.parametrize("seed", range(5))
def test_push_gives_the_exact_top_chunks_and_entities_on_a_random_graph(seed):
    g, rng = random_graph(seed), np.random.default_rng(100 + seed)
    n_e = len(g.entities)
    for _ in range(4):
        s = seeds(g, rng)
        exact = g.walk(s, 0.7, DEFAULT_EDGES, tol=1e-12, max_iter=500)
        pushed = g.push(s, 0.7, DEFAULT_EDGES, PUSH_EPS)
        assert _top(pushed[n_e:], 10).tolist() == _top(exact[n_e:], 10).tolist()
        assert _top(pushed[:n_e], 10).tolist() == _top(exact[:n_e], 10).tolist()
        assert np.abs(pushed - exact).sum() < 1e-3


def test_push_reads_only_the_edges_near_the_seeds():
    g = random_graph(0, entities=3000, chunks=1000)
    t = g.transition(DEFAULT_EDGES)
    s = np.zeros(g.size)
    s[[5, 17]] = 1.0
    read = []
    real = pagerank._send

    def counting(t_, r, nodes, mass, counts):
        read.append(int(counts.sum()))
        real(t_, r, nodes, mass, counts)

    pagerank._send = counting
    try:
        pagerank.push(t, s, 0.7, 1e-4)
    finally:
        pagerank._send = real
    assert 0 < sum(read) < 26 * len(t.dst) / 10  # a tenth of what the power iteration reads


async def test_ppr_mode_answers_the_same_with_push_and_exact_walk(ppr_engine, monkeypatch):
    answers, pushed = {}, []
    real = PPRGraph.push

    def push(self, *args):
        pushed.append(self.size)
        return real(self, *args)

    monkeypatch.setattr(PPRGraph, "push", push)
    for label, min_edges in (("exact", PUSH_MIN_EDGES), ("push", 0)):
        cfg = dataclasses.replace(ppr_mode.SETTINGS, push_min_edges=min_edges)
        monkeypatch.setattr(ppr_mode, "SETTINGS", cfg)
        data = await ppr_engine.query_data(QUESTION, QueryParam(mode="ppr", chunk_top_k=4, top_k=5))
        answers[label] = (keys(data), [e["entity_name"] for e in data["entities"]])
        assert len(pushed) == (label == "push")  # the corpus is far below PUSH_MIN_EDGES
    assert answers["exact"] == answers["push"]
    assert "answer" in answers["exact"][0]
