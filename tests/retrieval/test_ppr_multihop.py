"""Multi-hop quality of the ppr mode: the answer chunk only the graph reaches.

On the hand-built corpus of :mod:`tests.query.test_ppr`, the chunk saying
where Optica Nova's publisher sits shares no word with the question, while
the "nova" and "post" chunks share several ("publisher", "based", "Nova"),
so direct search ranks them first and never finds the answer. The walk
Optica Nova -> Lumen Institute -> answer chunk must bring it into the
context, after the chunk that leads to it.
"""

from __future__ import annotations

import pytest

from kgrag.retrieval import QueryParam
from kgrag.storage.base import edge_key
from tests.retrieval.ppr_corpus import QUESTION, cid, keys
from tests.support.settings import fake_settings

TOP = 4  # of six chunks


async def test_ppr_reaches_the_answer_chunk_that_direct_search_misses(ppr_engine):
    naive = await ppr_engine.query_data(QUESTION, QueryParam(mode="naive", chunk_top_k=TOP))
    data = await ppr_engine.query_data(QUESTION, QueryParam(mode="ppr", chunk_top_k=TOP))
    assert data["status"] == "success"
    assert "answer" not in keys(naive)
    ranked = keys(data)
    assert "answer" in ranked and ranked.index("journal") < ranked.index("answer")
    assert {"cafe", "lenses"}.isdisjoint(ranked)
    assert all(c["route"] == "ppr" for c in data["chunks"])
    names = [e["entity_name"] for e in data["entities"]]
    assert set(names[:2]) == {"Optica Nova", "Lumen Institute"}
    pairs = {(r["src_id"], r["tgt_id"]) for r in data["relations"]}
    assert edge_key("Optica Nova", "Lumen Institute") in pairs


async def test_trace_records_seeds_scores_and_drops(ppr_engine):
    data = await ppr_engine.query_data(QUESTION, QueryParam(mode="ppr", chunk_top_k=2), trace=True)
    routes = {(r["route"], r["kind"]): r["items"] for r in data["trace"]["routes"]}
    assert "Optica Nova" in [i["id"] for i in routes[("ppr/seeds", "entity")]]
    top = routes[("ppr/chunks", "chunk")]
    assert [i["score"] for i in top] == sorted((i["score"] for i in top), reverse=True)
    assert [i["id"] for i in top[:2]] == [c["chunk_id"] for c in data["chunks"]]
    drops = [
        d for d in data["trace"]["dropped"] if d.get("route") == "ppr" and d["kind"] == "chunk"
    ]
    assert drops and all("chunk_top_k 2" in d["reason"] for d in drops)
    assert cid("answer") in [d["id"] for d in drops]  # a near miss, named in the trace


DOCS = {
    "journal.md": "Optica Nova is a journal published by the Lumen Institute. It appears every spring.",
    "institute.md": "The Lumen Institute has its headquarters in Lyon. Marie Dubois founded the Lumen Institute.",
    "post.md": "The Daily Post is a newspaper printed in Leeds.",
    "cafe.md": "The cafeteria serves soup on Fridays.",
}


@pytest.mark.parametrize("extractor", ["llm", "nlp"])
async def test_ppr_on_indexes_built_by_either_extractor(tmp_path, extractor):
    from kgrag.api.facade import KGRag

    settings = fake_settings(
        tmp_path,
        llm_provider="fake" if extractor == "llm" else "none",
        extractor=extractor,
        embedding_dim=128,
    )
    async with KGRag(settings) as rag:
        await rag.insert(list(DOCS.values()), list(DOCS))
        question = "Where is the publisher of Optica Nova based?"
        data = await rag.query_data(
            question, mode="ppr", chunk_top_k=2, ll_keywords=["Optica Nova"]
        )
        naive = await rag.query_data(question, mode="naive", chunk_top_k=2)
        auto = await rag.query_data(question, mode="auto", chunk_top_k=2)
    assert auto["mode"] == ("auto" if extractor == "nlp" else "mix")  # routed per question
    assert "institute.md" not in [c["file_path"] for c in naive["chunks"]]
    assert sorted(c["file_path"] for c in data["chunks"]) == ["institute.md", "journal.md"]
    assert "Lumen Institute" in [e["entity_name"] for e in data["entities"]]
