"""The retrieval trace names where each lost item went missing."""

from __future__ import annotations

from kgrag.retrieval import QueryParam, render_trace, where_lost
from tests.retrieval.corpus import CHUNKS, chunk_id

Q = "Which license does FW-A need for TLS output?"
KW = dict(ll_keywords=["FW-A"], hl_keywords=["license dependency"])


async def trace_of(parts, **param):
    data = await parts.engine().query_data(Q, QueryParam(**KW, **param), trace=True)
    return data, data["trace"]


def drops(trace, stage=None, kind=None):
    return [
        d
        for d in trace["dropped"]
        if (stage is None or d["stage"] == stage) and (kind is None or d["kind"] == kind)
    ]


async def test_trace_records_keywords_params_and_routes(parts):
    data, trace = await trace_of(parts)
    assert trace["keywords"] == {
        "high_level": ["license dependency"],
        "low_level": ["FW-A"],
        "source": "caller",
    }
    assert trace["params"]["top_k"] == 40 and trace["mode"] == "mix"
    routes = {r["route"]: r for r in trace["routes"]}
    assert {"local", "global", "chunks", "lexical", "local/edges", "entity/chunks"} <= set(routes)
    assert routes["local"]["items"][0] == {
        "id": "FW-A",
        "score": routes["local"]["items"][0]["score"],
    }
    assert routes["local"]["query"] == "FW-A"
    assert trace["final"]["entities"] == len(data["entities"])


async def test_cosine_threshold_drops_are_listed_with_scores(parts):
    _, trace = await trace_of(parts, cosine_threshold=0.5)
    lost = {d["id"]: d for d in drops(trace, "retrieval", "entity")}
    assert "License L" in lost and lost["License L"]["score"] < 0.5
    assert "cosine_threshold 0.5" in lost["License L"]["reason"]


async def test_top_k_drops_are_listed(parts):
    data, trace = await trace_of(parts, top_k=1, mode="local")
    assert [e["entity_name"] for e in data["entities"]] == ["FW-A"]
    lost = {d["id"]: d["reason"] for d in drops(trace, "retrieval", "entity")}
    assert "past top_k 1" in lost["FW-B"]


async def test_a_tiny_budget_reports_truncated_items(parts):
    data, trace = await trace_of(parts, max_relation_tokens=80)
    kept = len(data["relations"])
    lost = drops(trace, "truncation", "relation")
    assert kept >= 1 and lost and data["truncated"]["relations"] == len(lost)
    assert all("max_relation_tokens 80" in d["reason"] for d in lost)
    assert data["tokens"]["relations"] <= 80


async def test_chunk_top_k_drops_name_their_file(parts):
    data, trace = await trace_of(parts, chunk_top_k=1)
    assert len(data["chunks"]) == 1
    lost = drops(trace, "truncation", "chunk")
    assert lost and all("chunk_top_k 1" in d["reason"] for d in lost)
    assert all(d["file"] in {p for p, _ in CHUNKS.values()} for d in lost)


async def test_missing_chunk_text_is_a_graph_stage_loss(parts):
    await parts.storage.kv("text_chunks").delete([chunk_id("C3")])
    data, trace = await trace_of(parts, mode="local")
    assert chunk_id("C3") not in [c["chunk_id"] for c in data["chunks"]]
    lost = drops(trace, "graph", "chunk")
    assert [d["id"] for d in lost] == [chunk_id("C3")]
    assert "text_chunks" in lost[0]["reason"]


async def test_render_trace_is_short_and_says_where_to_look(parts):
    _, trace = await trace_of(parts, max_relation_tokens=80, cosine_threshold=0.3)
    text = render_trace(trace)
    assert text.startswith('Retrieval trace: mode mix, question "Which license')
    assert "[keywords] source: caller" in text
    assert "[truncation]" in text and "max_relation_tokens" in text
    assert "[retrieval]" in text and "cosine_threshold" in text
    assert "manuals/fw-a-v2.md" in text  # chunks are named with their files
    assert len(text.splitlines()) < 120


async def test_without_trace_no_trace_key(parts):
    data = await parts.engine().query_data(Q, QueryParam(**KW))
    assert "trace" not in data


async def test_where_lost_names_the_stage_or_points_at_extraction(parts):
    _, trace = await trace_of(parts, max_relation_tokens=80, mode="local")
    lost = drops(trace, "truncation", "relation")[0]["id"]
    assert where_lost(trace, lost).startswith(f"{lost}: lost at truncation (found by local/edges)")
    assert where_lost(trace, "FW-A") == "FW-A: found by local and kept"
    assert "extraction" in where_lost(trace, "Firewall Z")


async def test_rerank_reorders_and_its_cut_is_traced(parts):
    engine = parts.engine(rerank=True)
    data = await engine.query_data(Q, QueryParam(**KW, chunk_top_k=1), trace=True)
    assert data["reranked"] and len(data["chunks"]) == 1
    trace = data["trace"]
    assert any(r["route"] == "rerank" for r in trace["routes"])
    assert drops(trace, "rerank", "chunk")
    off = await engine.query_data(
        Q, QueryParam(**KW, chunk_top_k=1, enable_rerank=False), trace=True
    )
    assert not off["reranked"] and not drops(off["trace"], "rerank")
