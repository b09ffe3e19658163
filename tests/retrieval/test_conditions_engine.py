"""The conditions stage inside a query, on the hand-written firewall corpus."""

from __future__ import annotations

from kgrag.retrieval import QueryParam, render_trace
from tests.retrieval.corpus import CHUNKS, chunk_id

Q = "Which license does FW-A need for TLS output?"
KW = dict(ll_keywords=["FW-A"], hl_keywords=["license dependency"])
KEYS = {chunk_id(k): k for k in CHUNKS}


async def data_of(parts, question=Q, **param):
    return await parts.engine().query_data(question, QueryParam(**KW, **param), trace=True)


def names(data):
    entities = {e["entity_name"] for e in data["entities"]}
    relations = {(r["src_id"], r["tgt_id"]) for r in data["relations"]}
    return entities, relations, {KEYS[c["chunk_id"]] for c in data["chunks"]}


async def test_items_about_another_model_leave_the_context(parts):
    data = await data_of(parts)
    entities, relations, chunks = names(data)
    assert "FW-B" not in entities and "License M" not in entities and "C2" not in chunks
    assert ("FW-B", "License M") not in relations and ("FW-A", "License L") in relations
    dropped = {d["id"]: d for d in data["trace"]["dropped"] if d["stage"] == "conditions"}
    assert {"FW-B", "License M", "FW-B <-> License M", chunk_id("C2")} <= set(dropped)
    assert dropped["FW-B"]["reason"] == "names FW-B, not FW-A"
    assert set(data["conditions"]["dropped"]) == set(dropped)


async def test_off_leaves_them_in(parts):
    entities, _, chunks = names(await data_of(parts, mode="global", conditions="off"))
    assert "FW-B" in entities and "C2" in chunks


async def test_kept_conflicting_items_are_labelled_in_the_context(parts):
    data = await data_of(parts, mode="global", keep_conflicting=True)
    entities, _, chunks = names(data)
    assert "FW-B" in entities and "C2" in chunks
    assert not [d for d in data["trace"]["dropped"] if d["stage"] == "conditions"]
    notes = [n["message"] for n in data["trace"]["notes"] if n["stage"] == "conditions"]
    assert "kept conflicting entity FW-B: names FW-B, not FW-A" in notes
    result = await parts.engine().query(
        Q, QueryParam(**KW, mode="global", keep_conflicting=True, only_need_context=True)
    )
    section = result.context.split("Conditions of the question")[1]
    assert "kept only for comparison" in section and ": names FW-B, not FW-A" in section


async def test_coverage_is_on_the_result(parts):
    result = await parts.engine().query(Q, QueryParam(**KW, only_need_context=True))
    status = {e["constraint"]["value"]: e["status"] for e in result.coverage}
    assert status == {"FW-A": "covered", "TLS": "covered"}
    tls = next(e for e in result.coverage if e["constraint"]["value"] == "TLS")
    assert chunk_id("C2") in tls["conflicting"] and chunk_id("C1") in tls["items"]
    assert "Conditions of the question" not in result.context  # all covered: nothing to say


async def test_a_missing_version_reaches_the_prompt(parts):
    q = "Does FW-B need a license for TLS output on firmware v2?"
    result = await parts.engine().query(q, QueryParam(ll_keywords=["FW-B"], only_need_prompt=True))
    assert "The sources describe TLS and firmware v2 for FW-A only, not for FW-B." in result.prompt
    assert "say so plainly" in result.prompt
    status = {e["constraint"]["value"]: e["status"] for e in result.coverage}
    assert status["v2"] == "conflicting-only" and status["FW-B"] == "missing"


async def test_the_trace_shows_the_stage(parts):
    data = await data_of(parts, mode="global")
    text = render_trace(data["trace"])
    assert "[conditions] source: rules" in text and "asked: FW-A (model), TLS (protocol)" in text
    lost = len([d for d in data["trace"]["dropped"] if d["stage"] == "conditions"])
    assert f"[conditions] {lost} item(s) lost" in text and "--keep-conflicting" in text
    assert "  - entity FW-B:" in text
