"""``/query``, ``/query/stream`` and ``/query/data`` over real HTTP, and the body's QueryParam."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kgrag.retrieval.param import QueryParam
from kgrag.server.views.query_body import FILTER_FIELDS, PARAM_FIELDS, ROUTE_FIELDS, QueryBody

from .conftest import StartServer
from .doc_calls import CAROL, documents, insert

QUESTION = "Who works for Scrooge?"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """One server with the three Christmas Carol texts, shared by the read-only tests here."""
    from .served import serving

    with serving(tmp_path_factory.mktemp("query") / "w") as served, served.client() as c:
        insert(c, CAROL, file_sources=["a.txt", "b.txt", "c.txt"])
        yield c


def test_every_query_param_field_is_reachable_from_the_body() -> None:
    fields = {f.name for f in dataclasses.fields(QueryParam)}
    assert PARAM_FIELDS <= fields and FILTER_FIELDS <= fields
    assert fields - PARAM_FIELDS - FILTER_FIELDS == ROUTE_FIELDS, "map the new QueryParam field"
    body = QueryBody(
        query=" q ",
        mode="ppr",
        top_k=7,
        include_references=False,
        filters={"doc_ids": ["d1"], "where": {"k": "v"}},
        conditions="off",
        keep_conflicting=True,
        path_max_hops=2,
    )
    param = QueryParam.from_settings(None, **body.overrides())
    assert (param.mode, param.top_k, param.include_references) == ("ppr", 7, False)
    assert (param.doc_ids, param.where, param.path_glob) == (["d1"], {"k": "v"}, None)
    assert (param.conditions, param.keep_conflicting, param.path_max_hops) == ("off", True, 2)
    assert param.stream is False and param.chunk_top_k == QueryParam().chunk_top_k
    assert QueryBody(query="q").overrides()["include_references"] is True  # LightRAG's default


def test_query_answers_in_lightrags_shape_with_kgrags_fields(client: httpx.Client) -> None:
    body = client.post("/query", json={"query": QUESTION}).json()
    assert {"response", "references", "response_time", "llm_generated", "coverage", "cost"} <= set(
        body
    )
    assert "Bob Cratchit" in body["response"] and body["llm_generated"] is True
    assert body["mode"] == "mix" and body["cost"]["calls"] >= 1
    ref = body["references"][0]
    assert {
        "reference_id",
        "file_path",
        "kind",
        "doc_id",
        "pages",
        "section",
        "start",
        "end",
    } <= set(ref)
    assert "content" not in ref and ref["file_path"] in ("a.txt", "b.txt", "c.txt")
    assert [c["constraint"]["value"] for c in body["coverage"]] == ["Scrooge"]
    with_text = client.post(
        "/query", json={"query": QUESTION, "include_chunk_content": True}
    ).json()
    chunk_ref = next(r for r in with_text["references"] if r["kind"] == "chunk")
    assert chunk_ref["content"] and all(isinstance(t, str) for t in chunk_ref["content"])
    assert (
        client.post("/query", json={"query": QUESTION, "include_references": False}).json()[
            "references"
        ]
        is None
    )


def test_query_options_reach_the_engine(client: httpx.Client) -> None:
    context = client.post("/query", json={"query": QUESTION, "only_need_context": True}).json()
    assert context["llm_generated"] is False and "Bob Cratchit" in context["response"]
    prompt = client.post(
        "/query",
        json={"query": QUESTION, "only_need_prompt": True, "user_prompt": "Answer in French."},
    ).json()
    assert "Answer in French." in prompt["response"]
    ids = {d["file_path"]: d["id"] for d in documents(client)}
    only_b = client.post(
        "/query/data", json={"query": "Who died?", "filters": {"doc_ids": [ids["b.txt"]]}}
    ).json()
    assert {c["doc_id"] for c in only_b["data"]["chunks"]} == {ids["b.txt"]}
    bypass = client.post("/query", json={"query": "Hello there", "mode": "bypass"}).json()
    assert bypass["mode"] == "bypass" and bypass["references"] == []
    history = [
        {"role": "user", "content": "Who is Scrooge?"},
        {"role": "assistant", "content": "A miser."},
    ]
    assert (
        client.post("/query", json={"query": QUESTION, "conversation_history": history}).status_code
        == 200
    )


@pytest.mark.parametrize(
    "body",
    [
        {"query": "   "},
        {"query": QUESTION, "top_k": 0},
        {"query": QUESTION, "top_k": 1001},
        {"query": QUESTION, "max_total_tokens": 2_000_000},
        {"query": QUESTION, "conversation_history": [{"content": "no role"}]},
        {"query": QUESTION, "conditions": "sometimes"},
        {"query": "x" * 70_000},
    ],
)
def test_bodies_out_of_bounds_are_422(client: httpx.Client, body: dict) -> None:
    assert client.post("/query", json=body).status_code == 422


def test_a_mode_nobody_knows_is_a_400_naming_the_modes(client: httpx.Client) -> None:
    for path in ("/query", "/query/stream", "/query/data"):
        reply = client.post(path, json={"query": QUESTION, "mode": "psychic"})
        assert reply.status_code == 400 and "mix" in reply.json()["detail"], path


def _lines(reply: httpx.Response) -> list[dict]:
    assert reply.status_code == 200 and reply.headers["content-type"].startswith(
        "application/x-ndjson"
    )
    return [json.loads(line) for line in reply.text.splitlines() if line]


def test_stream_sends_references_then_pieces_then_a_final_record(client: httpx.Client) -> None:
    lines = _lines(client.post("/query/stream", json={"query": QUESTION}))
    assert list(lines[0]) == ["references"] and lines[0]["references"]
    pieces = [line["response"] for line in lines[1:-1]]
    assert pieces and all(set(line) == {"response"} for line in lines[1:-1])
    final = lines[-1]
    assert final["done"] is True and {"coverage", "cost", "response_time", "llm_generated"} <= set(
        final
    )
    assert "Bob Cratchit" in "".join(pieces)
    plain = _lines(
        client.post("/query/stream", json={"query": QUESTION, "include_references": False})
    )
    assert "references" not in plain[0] and "response" in plain[0]
    (whole,) = _lines(client.post("/query/stream", json={"query": QUESTION, "stream": False}))
    assert whole["references"] and "Bob Cratchit" in whole["response"] and "cost" in whole


def test_query_data_is_lightrags_structure(client: httpx.Client) -> None:
    body = client.post("/query/data", json={"query": QUESTION, "mode": "local"}).json()
    assert body["status"] == "success" and set(body["data"]) >= {
        "entities",
        "relationships",
        "chunks",
        "references",
    }
    entity = body["data"]["entities"][0]
    assert {
        "entity_name",
        "entity_type",
        "description",
        "source_id",
        "file_path",
        "reference_id",
    } <= set(entity)
    relation = body["data"]["relationships"][0]
    assert {
        "src_id",
        "tgt_id",
        "description",
        "keywords",
        "weight",
        "source_id",
        "reference_id",
    } <= set(relation)
    assert relation["reference_id"]
    meta = body["metadata"]
    assert meta["query_mode"] == "local" and set(meta["keywords"]) == {"high_level", "low_level"}
    assert meta["processing_info"]["final_chunks_count"] == len(body["data"]["chunks"])
    assert "trace" not in meta
    # the chunks carry their text; the references name their span, its text only on request
    refs = body["data"]["references"]
    assert refs and all("text" not in r and "start" in r for r in refs)
    asked = {"query": QUESTION, "mode": "local", "include_chunk_content": True}
    full = client.post("/query/data", json=asked).json()["data"]["references"]
    assert any(r.get("text") for r in full if r["kind"] == "chunk")
    traced = client.post("/query/data", json={"query": QUESTION, "trace": True}).json()
    assert traced["metadata"]["trace"]


def test_queries_on_an_empty_workspace_answer(start_server: StartServer, tmp_path: Path) -> None:
    served = start_server()
    with served.client() as c:
        reply = c.post("/query", json={"query": QUESTION})
        assert reply.status_code == 200 and reply.json()["llm_generated"] is False
        assert c.post("/query/data", json={"query": QUESTION}).json()["data"]["chunks"] == []


@pytest.mark.parametrize(
    "mode", ["naive", "local", "global", "hybrid", "mix", "bypass", "ppr", "path"]
)
def test_every_mode_answers(client: httpx.Client, mode: str) -> None:
    reply = client.post("/query", json={"query": QUESTION, "mode": mode})
    assert reply.status_code == 200 and reply.json()["mode"] == mode and reply.json()["response"]


def test_auto_mode_resolves_per_index(client: httpx.Client) -> None:
    assert client.post("/query", json={"query": QUESTION, "mode": "auto"}).json()["mode"] == "mix"
