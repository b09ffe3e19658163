"""Golden expectations per mode on the hand-written corpus."""

from __future__ import annotations

import pytest

from kgrag.errors import QueryError
from kgrag.retrieval import QueryParam, get_mode, mode_names, register_mode
from kgrag.retrieval.records import Retrieved
from tests.retrieval.corpus import CHUNKS, chunk_id

KEYS = {chunk_id(k): k for k in CHUNKS}
LICENSE_Q = "Which license does FW-A need for TLS output?"
LICENSE_KW = dict(ll_keywords=["FW-A"], hl_keywords=["license dependency"])
AUTH_Q = "How does the Log Platform check who sent an alert?"
AUTH_KW = dict(ll_keywords=["Log Platform"], hl_keywords=["sender authentication"])


def entities(data):
    return [e["entity_name"] for e in data["entities"]]


def relations(data):
    return [(r["src_id"], r["tgt_id"]) for r in data["relations"]]


def chunks(data):
    return [KEYS[c["chunk_id"]] for c in data["chunks"]]


async def run(parts, question, **param):
    # Each mode's own retrieval: the conditions stage (which drops FW-B items from a
    # question about FW-A) is tested in test_conditions*.py.
    return await parts.engine().query_data(question, QueryParam(**{"conditions": "off", **param}))


async def test_naive_finds_chunks_only(parts):
    data = await run(parts, LICENSE_Q, mode="naive")
    assert data["status"] == "success"
    assert data["entities"] == [] and data["relations"] == []
    assert chunks(data)[0] == "C3"
    assert set(chunks(data)) == {"C1", "C2", "C3"}
    assert parts.chat_provider.requests == []  # naive needs no keywords


async def test_local_ranks_entity_edges_by_degree_then_weight(parts):
    data = await run(parts, LICENSE_Q, mode="local", **LICENSE_KW)
    assert entities(data)[0] == "FW-A"
    # FW-A's edges: degree 6 (Log Platform weight 2, TLS weight 1), then degree 5.
    assert relations(data)[:2] == [("FW-A", "Log Platform"), ("FW-A", "TLS")]
    assert {("FW-A", "License L"), ("FW-A", "UDP")} <= set(relations(data)[2:4])
    assert "C3" in chunks(data) and "C6" not in chunks(data)
    assert all(c["route"] == "entity" for c in data["chunks"])


async def test_global_keeps_relation_vector_order_and_adds_endpoints(parts):
    data = await run(parts, LICENSE_Q, mode="global", **LICENSE_KW)
    assert relations(data) == [("FW-B", "License M"), ("FW-A", "License L")]
    assert set(entities(data)) == {"FW-A", "FW-B", "License L", "License M"}
    assert {"C2", "C3"} <= set(chunks(data))


async def test_hybrid_interleaves_local_and_global(parts):
    data = await run(parts, LICENSE_Q, mode="hybrid", **LICENSE_KW)
    assert relations(data)[:2] == [("FW-A", "Log Platform"), ("FW-B", "License M")]
    assert len(relations(data)) == len(set(relations(data)))
    assert entities(data)[0] == "FW-A" and "License M" in entities(data)
    assert len(entities(data)) == len(set(entities(data)))


async def test_mix_adds_direct_chunks_fused_with_bm25(parts):
    data = await run(parts, AUTH_Q, mode="mix", **AUTH_KW)
    assert entities(data)[:2] == ["Log Platform", "Identity Directory"]
    assert ("Identity Directory", "Log Platform") in relations(data)
    assert chunks(data)[:2] == ["C1", "C4"]
    assert data["chunks"][0]["route"] == "vector+lexical"
    assert "C5" in chunks(data)  # reached through the Identity Directory entity
    assert "C6" not in chunks(data)


async def test_multi_hop_stays_one_hop(parts):
    # Local search reads the edges of matched entities only: the Audit Report
    # is two hops from the Log Platform and must not appear.
    data = await run(parts, AUTH_Q, mode="local", **AUTH_KW)
    assert "Audit Report" not in entities(data)
    assert ("Audit Report", "Identity Directory") not in relations(data)


async def test_chunks_carry_file_and_doc_and_reference(parts):
    data = await run(parts, LICENSE_Q, mode="mix", **LICENSE_KW)
    refs = {r["reference_id"]: r["file_path"] for r in data["references"]}
    for c in data["chunks"]:
        assert c["file_path"] == CHUNKS[KEYS[c["chunk_id"]]][0]
        assert c["doc_id"].startswith("doc-")
        assert refs[c["reference_id"]] == c["file_path"]
    assert list(refs) == [str(i) for i in range(1, len(refs) + 1)]


async def test_llm_keywords_are_used_and_shared_across_modes(parts):
    first = await run(parts, LICENSE_Q, mode="local")
    second = await run(parts, LICENSE_Q, mode="global")
    assert first["keywords"]["source"] == "llm" and "FW-A" in first["keywords"]["low_level"]
    assert second["keywords"]["source"] == "cache"
    assert parts.chat_provider.roles() == ["keywords"]
    assert "FW-A" in entities(first)


async def test_caller_keywords_skip_the_keywords_call(parts):
    data = await run(parts, LICENSE_Q, mode="hybrid", **LICENSE_KW)
    assert data["keywords"]["source"] == "caller"
    assert parts.chat_provider.requests == []


async def test_unknown_mode_is_a_query_error(parts):
    with pytest.raises(QueryError, match="unknown query mode"):
        await run(parts, LICENSE_Q, mode="telepathy")


async def test_a_new_mode_is_one_function(parts):
    async def only_fw_b(ctx):
        nodes = await ctx.storage.graph.get_nodes(["FW-B"])
        from kgrag.retrieval.records import EntityHit

        return Retrieved(entities=[EntityHit("FW-B", nodes["FW-B"], 1.0, 2, "test")])

    register_mode("test-only-fw-b", only_fw_b, vectors={"query"})
    try:
        data = await run(parts, LICENSE_Q, mode="test-only-fw-b")
        assert entities(data) == ["FW-B"] and chunks(data) == ["C2"]
        assert "test-only-fw-b" in mode_names()
        assert get_mode("test-only-fw-b").keywords is False
    finally:
        from kgrag.retrieval.modes import registry as modes

        modes._MODES.pop("test-only-fw-b", None)
