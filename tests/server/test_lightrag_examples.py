"""LightRAG Server's documented request examples, replayed against kgrag's server.

Each example is the request LightRAG's API documentation shows (as curl
would send it: same path, same body fields, same form field names); the
checks are on the response shapes LightRAG documents, which clients and
LightRAG's web UI read. kgrag's extra fields may appear beside them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from .doc_calls import wait_job
from .served import Served

TEXTS = [
    "Elon Musk leads Tesla. Tesla builds electric cars in Austin.",
    "Elon Msk founded SpaceX. Ellon Musk tweets about Tesla.",
]
DOC_FIELDS = {
    "id", "content_summary", "content_length", "status", "created_at", "updated_at",
    "track_id", "chunks_count", "error_msg", "metadata", "file_path",
}  # fmt: skip
ACCEPTED = {"status", "message", "track_id"}
PAGE = {"page", "page_size", "total_count", "total_pages", "has_next", "has_prev"}
PIPELINE = {
    "autoscanned", "busy", "job_name", "job_start", "docs", "batchs", "cur_batch",
    "request_pending", "latest_message", "history_messages",
}  # fmt: skip
SUMMARY = {
    "merged",
    "merge_status",
    "merge_error",
    "operation_status",
    "target_entity",
    "final_entity",
    "renamed",
}


@pytest.fixture
def client(server: Served) -> Iterator[httpx.Client]:
    """A client of a server holding :data:`TEXTS`, inserted as LightRAG's example does."""
    with server.client() as c:
        # curl -X POST /documents/texts -d '{"texts": [...], "file_sources": [...]}'
        reply = c.post("/documents/texts", json={"texts": TEXTS, "file_sources": ["tesla.txt"]})
        assert set(reply.json()) >= ACCEPTED and reply.json()["status"] == "success"
        assert wait_job(c, reply.json()["job_id"])["status"] == "succeeded"
        yield c


def test_upload_and_text_examples(client: httpx.Client) -> None:
    # curl -X POST /documents/upload -F "file=@document.txt"
    files = {"file": ("document.txt", b"Tesla opened a factory in Berlin.")}
    up = client.post("/documents/upload", files=files).json()
    assert (
        set(up) >= ACCEPTED and up["status"] == "success" and up["track_id"].startswith("upload_")
    )
    # curl -X POST /documents/text -d '{"text": "...", "file_source": "..."}'
    text = {"text": "This is a sample text to be inserted.", "file_source": "Source of the text"}
    one = client.post("/documents/text", json=text).json()
    assert one["status"] == "success" and one["track_id"].startswith("insert_")
    for reply in (up, one):
        assert wait_job(client, reply["job_id"])["status"] == "succeeded"
    # curl /documents/track_status/upload_...
    track = client.get(f"/documents/track_status/{up['track_id']}").json()
    assert set(track) >= {"track_id", "documents", "total_count", "status_summary"}
    assert track["documents"][0]["file_path"].endswith("-document.txt")
    assert DOC_FIELDS <= set(track["documents"][0])


def test_listing_examples(client: httpx.Client) -> None:
    # curl -X POST /documents/paginated -d '{"status_filter": "PROCESSED", ...}'
    body = {
        "status_filter": "PROCESSED",
        "page": 1,
        "page_size": 50,
        "sort_field": "updated_at",
        "sort_direction": "desc",
    }
    page = client.post("/documents/paginated", json=body).json()
    assert set(page) == {"documents", "pagination", "status_counts"} and len(page["documents"]) == 2
    assert all(DOC_FIELDS <= set(d) for d in page["documents"])
    assert set(page["pagination"]) == PAGE
    # curl /documents/status_counts ; /documents/pipeline_status ; /documents
    assert client.get("/documents/status_counts").json()["status_counts"]["processed"] == 2
    assert PIPELINE <= set(client.get("/documents/pipeline_status").json())
    assert set(client.get("/documents").json()["statuses"]) == {"processed"}


def test_delete_example(client: httpx.Client) -> None:
    doc_id = client.post("/documents/paginated", json={}).json()["documents"][0]["id"]
    # curl -X DELETE /documents/delete_document -d '{"doc_ids": ["doc_123456"], "delete_file": false}'
    body = {"doc_ids": [doc_id], "delete_file": False}
    gone = client.request("DELETE", "/documents/delete_document", json=body).json()
    assert set(gone) >= {"status", "message", "doc_id"} and gone["status"] == "deletion_started"
    assert wait_job(client, gone["job_id"])["result"]["deleted"] == [doc_id]


def test_query_examples(client: httpx.Client) -> None:
    # curl -X POST /query -d '{"query": "What does Tesla build?", "mode": "hybrid"}'
    answer = client.post(
        "/query", json={"query": "What does Tesla build?", "mode": "hybrid"}
    ).json()
    assert isinstance(answer["response"], str) and answer["response"]
    assert isinstance(answer["response_time"], float) and answer["llm_generated"] is True
    assert all({"reference_id", "file_path"} <= set(r) for r in answer["references"])
    # curl -X POST /query -d '{..., "include_references": true, "include_chunk_content": true}'
    body = {
        "query": "What does Tesla build?",
        "include_references": True,
        "include_chunk_content": True,
    }
    refs = client.post("/query", json=body).json()["references"]
    assert any(isinstance(r.get("content"), list) and r["content"] for r in refs)
    # curl -N -X POST /query/stream -d '{"query": "...", "mode": "mix", "stream": true}'
    stream = client.post(
        "/query/stream", json={"query": "Who leads Tesla?", "mode": "mix", "stream": True}
    )
    lines = [json.loads(x) for x in stream.text.splitlines() if x]
    assert "references" in lines[0] and all(set(x) == {"response"} for x in lines[1:-1])


def test_query_data_example(client: httpx.Client) -> None:
    # curl -X POST /query/data -d '{"query": "...", "mode": "local", "top_k": 10}'
    data = client.post(
        "/query/data", json={"query": "Who leads Tesla?", "mode": "local", "top_k": 10}
    ).json()
    assert set(data) == {"status", "message", "data", "metadata"} and data["status"] == "success"
    assert set(data["data"]) >= {"entities", "relationships", "chunks", "references"}
    meta = data["metadata"]
    assert meta["query_mode"] == "local" and set(meta["keywords"]) == {"high_level", "low_level"}
    assert set(meta["processing_info"]) >= {
        "total_entities_found",
        "total_relations_found",
        "final_chunks_count",
    }
    assert {"content", "file_path", "chunk_id", "reference_id"} <= set(data["data"]["chunks"][0])


def test_label_and_subgraph_examples(client: httpx.Client) -> None:
    # curl /graph/label/list ; /graph/label/popular?limit=300 ; /graph/label/search?q=tes&limit=50
    labels = client.get("/graph/label/list").json()
    assert isinstance(labels, list) and {"Tesla", "Elon Musk", "Elon Msk", "Ellon Musk"} <= set(
        labels
    )
    assert client.get("/graph/label/popular", params={"limit": 300}).json()[0] == "Tesla"
    assert client.get("/graph/label/search", params={"q": "tes", "limit": 50}).json()[0] == "Tesla"
    # curl "/graphs?label=Tesla&max_depth=3&max_nodes=1000"
    graph = client.get(
        "/graphs", params={"label": "Tesla", "max_depth": 3, "max_nodes": 1000}
    ).json()
    assert set(graph) == {"nodes", "edges", "is_truncated"}
    assert all(set(n) == {"id", "labels", "properties"} for n in graph["nodes"])
    assert all(set(e) == {"id", "type", "source", "target", "properties"} for e in graph["edges"])
    assert graph["nodes"][0]["properties"]["entity_id"] == "Tesla"
    # curl "/graph/entity/exists?name=Tesla"
    assert client.get("/graph/entity/exists", params={"name": "Tesla"}).json() == {"exists": True}


def test_entity_edit_examples(client: httpx.Client) -> None:
    # POST /graph/entity/edit (simple update)
    edit = {
        "entity_name": "Tesla",
        "updated_data": {"description": "Updated description"},
        "allow_rename": False,
        "allow_merge": False,
    }
    edited = client.post("/graph/entity/edit", json=edit).json()
    assert set(edited) == {"status", "message", "data", "operation_summary"}
    assert (
        edited["message"] == "Entity updated successfully"
        and edited["data"]["description"] == "Updated description"
    )
    assert set(edited["operation_summary"]) == SUMMARY
    # POST /graph/entity/edit (rename with auto-merge)
    updated = {"entity_name": "Elon Musk", "description": "Corrected description"}
    rename = {
        "entity_name": "Elon Msk",
        "updated_data": updated,
        "allow_rename": True,
        "allow_merge": True,
    }
    merged = client.post("/graph/entity/edit", json=rename).json()
    assert merged["message"] == "Entity merged successfully into 'Elon Musk'"
    assert merged["operation_summary"] == {
        "merged": True, "merge_status": "success", "merge_error": None, "operation_status": "success",
        "target_entity": "Elon Musk", "final_entity": "Elon Musk", "renamed": True,
    }  # fmt: skip
    # POST /graph/entities/merge
    merge = {"entities_to_change": ["Ellon Musk"], "entity_to_change_into": "Elon Musk"}
    done = client.post("/graph/entities/merge", json=merge).json()
    assert (
        done["status"] == "success"
        and done["message"] == "Successfully merged 1 entities into 'Elon Musk'"
    )
    assert set(client.get("/graph/label/list").json()) & {"Elon Msk", "Ellon Musk"} == set()


def test_create_examples(client: httpx.Client) -> None:
    # POST /graph/entity/create
    data = {"description": "A battery plant", "entity_type": "ORGANIZATION"}
    created = client.post(
        "/graph/entity/create", json={"entity_name": "Gigafactory", "entity_data": data}
    ).json()
    assert created["status"] == "success" and created["data"]["entity_type"] == "ORGANIZATION"
    # POST /graph/relation/create
    relation = {
        "source_entity": "Elon Musk",
        "target_entity": "Gigafactory",
        "relation_data": {
            "description": "Elon Musk opened the Gigafactory",
            "keywords": "opened",
            "weight": 1.0,
        },
    }
    linked = client.post("/graph/relation/create", json=relation).json()
    assert (
        linked["status"] == "success"
        and linked["data"]["description"] == "Elon Musk opened the Gigafactory"
    )
