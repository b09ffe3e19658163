"""The graph routes over real HTTP: labels, subgraphs, edits, merges, dedupe, unmerge, export."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator

import httpx
import pytest

from .doc_calls import CAROL, insert
from .served import Served


@pytest.fixture
def client(server: Served) -> Iterator[httpx.Client]:
    with server.client() as c:
        insert(c, CAROL, file_sources=["a.txt", "b.txt", "c.txt"])
        yield c


def test_labels_popular_search_and_exists(client: httpx.Client) -> None:
    labels = client.get("/graph/label/list").json()
    assert labels == sorted(labels) and {"Scrooge", "Bob Cratchit", "London"} <= set(labels)
    edges = client.get("/graphs", params={"label": "*"}).json()["edges"]
    degree = {name: sum(name in (e["source"], e["target"]) for e in edges) for name in labels}
    best = sorted(labels, key=lambda n: (-degree[n], n))[:3]
    assert client.get("/graph/label/popular", params={"limit": 3}).json() == best
    assert client.get("/graph/label/search", params={"q": "scro"}).json() == [
        "Scrooge",
        "Ebenezer Scrooge",
    ]
    assert (
        client.get("/graph/label/search", params={"q": "Scroge"}).json()[0] == "Scrooge"
    )  # close spelling
    assert client.get("/graph/label/search", params={"q": "zzz"}).json() == []
    assert client.get("/graph/entity/exists", params={"name": "London"}).json() == {"exists": True}
    assert client.get("/graph/entity/exists", params={"name": "Paris"}).json() == {"exists": False}
    assert client.get("/graph/label/popular", params={"limit": 0}).status_code == 422


def test_subgraphs_by_label_depth_and_size(client: httpx.Client) -> None:
    near = client.get("/graphs", params={"label": "Bob Cratchit", "max_depth": 1}).json()
    assert [n["id"] for n in near["nodes"]] == ["Bob Cratchit", "Scrooge"] and near[
        "is_truncated"
    ] is False
    node = near["nodes"][0]
    assert node["labels"] == ["Bob Cratchit"] and node["properties"]["entity_id"] == "Bob Cratchit"
    assert node["properties"]["file_path"] == "a.txt" and node["properties"][
        "source_id"
    ].startswith("chunk-")
    (edge,) = near["edges"]
    assert {edge["source"], edge["target"]} == {"Bob Cratchit", "Scrooge"} and edge[
        "type"
    ] == "DIRECTED"
    assert edge["properties"]["keywords"] and edge["id"] == f"{edge['source']}-{edge['target']}"
    deeper = client.get("/graphs", params={"label": "Bob Cratchit", "max_depth": 2}).json()
    assert len(deeper["nodes"]) > 2
    cut = client.get("/graphs", params={"label": "Scrooge", "max_depth": 3, "max_nodes": 3}).json()
    assert (
        len(cut["nodes"]) == 3
        and cut["is_truncated"] is True
        and cut["nodes"][0]["id"] == "Scrooge"
    )
    names = {n["id"] for n in cut["nodes"]}
    assert all(e["source"] in names and e["target"] in names for e in cut["edges"])
    everything = client.get("/graphs", params={"label": "*", "max_nodes": 1000}).json()
    assert len(everything["nodes"]) == len(client.get("/graph/label/list").json())
    assert client.get("/graphs", params={"label": "Nobody"}).json() == {
        "nodes": [],
        "edges": [],
        "is_truncated": False,
    }


def test_entity_edits_renames_and_merges(client: httpx.Client) -> None:
    edit = {
        "entity_name": "Fred",
        "updated_data": {"description": "Scrooge's cheerful nephew.", "entity_type": "PERSON"},
    }
    reply = client.post("/graph/entity/edit", json=edit).json()
    assert (
        reply["status"] == "success"
        and reply["data"]["description"] == "Scrooge's cheerful nephew."
    )
    assert (
        reply["data"]["entity_type"] == "PERSON" and reply["operation_summary"]["merged"] is False
    )
    bad = client.post(
        "/graph/entity/edit", json={"entity_name": "Fred", "updated_data": {"colour": "red"}}
    )
    assert bad.status_code == 400 and "description" in bad.json()["detail"]
    rename = {"entity_name": "Fred", "updated_data": {"entity_name": "Nephew Fred"}}
    assert client.post("/graph/entity/edit", json=rename).status_code == 400  # needs allow_rename
    renamed = client.post("/graph/entity/edit", json={**rename, "allow_rename": True}).json()
    assert (
        renamed["operation_summary"]["renamed"] is True
        and renamed["data"]["entity_id"] == "Nephew Fred"
    )
    assert client.get("/graph/entity/exists", params={"name": "Fred"}).json() == {"exists": False}
    onto = {
        "entity_name": "Marley",
        "updated_data": {"entity_name": "Jacob Marley"},
        "allow_rename": True,
    }
    assert (
        client.post("/graph/entity/edit", json=onto).status_code == 409
    )  # exists: needs allow_merge
    merged = client.post("/graph/entity/edit", json={**onto, "allow_merge": True}).json()
    assert merged["operation_summary"]["merged"] is True and "Marley" in merged["data"]["aliases"]
    missing = client.post(
        "/graph/entity/edit", json={"entity_name": "Nobody", "updated_data": {"description": "x"}}
    )
    assert missing.status_code == 404 and missing.json()["error"] == "EntityNotFoundError"


TIM = {
    "entity_name": "Tiny Tim",
    "entity_data": {"entity_type": "PERSON", "description": "A sick boy."},
}


def _delete(client: httpx.Client, path: str, **body: str) -> httpx.Response:
    return client.request("DELETE", path, json=body)


def test_create_and_delete_an_entity(client: httpx.Client) -> None:
    made = client.post("/graph/entity/create", json=TIM)
    assert made.status_code == 200 and made.json()["data"]["description"] == "A sick boy."
    assert client.post("/graph/entity/create", json={"entity_name": "Tiny Tim"}).status_code == 409
    bad = client.post("/graph/entity/create", json={"entity_name": "X", "entity_data": {"age": 6}})
    assert bad.status_code == 400
    assert _delete(client, "/graph/entity/delete", entity_name="Tiny Tim").status_code == 200
    assert client.get("/graph/entity/exists", params={"name": "Tiny Tim"}).json()["exists"] is False
    assert _delete(client, "/graph/entity/delete", entity_name="Tiny Tim").status_code == 404


def test_create_edit_and_delete_a_relation(client: httpx.Client) -> None:
    client.post("/graph/entity/create", json=TIM)
    pair = {"source_entity": "Tiny Tim", "target_entity": "Bob Cratchit"}
    data = {"description": "son of", "keywords": "family", "weight": 2.0}
    created = client.post("/graph/relation/create", json={**pair, "relation_data": data}).json()
    assert created["data"]["keywords"] == "family" and created["data"]["weight"] == 2.0
    ids = {"source_id": "Tiny Tim", "target_id": "Bob Cratchit"}
    edit = {**ids, "updated_data": {"description": "youngest son of"}}
    edited = client.post("/graph/relation/edit", json=edit).json()
    assert edited["data"]["description"] == "youngest son of"
    missing = {"source_id": "Tiny Tim", "target_id": "London", "updated_data": {"weight": 1}}
    assert client.post("/graph/relation/edit", json=missing).status_code == 404
    gone = _delete(client, "/graph/relation/delete", **pair).json()
    assert gone["status"] == "success" and gone["status_code"] == 200
    near = client.get("/graphs", params={"label": "Tiny Tim", "max_depth": 1}).json()
    assert [n["id"] for n in near["nodes"]] == ["Tiny Tim"] and near["edges"] == []


def test_merge_then_unmerge(client: httpx.Client) -> None:
    body = {"entities_to_change": ["Scrooge"], "entity_to_change_into": "Ebenezer Scrooge"}
    merged = client.post("/graph/entities/merge", json=body).json()
    assert merged["status"] == "success" and merged["data"]["deleted_entities"] == ["Scrooge"]
    assert "Scrooge" not in client.get("/graph/label/list").json()
    (record,) = client.get("/graph/merges").json()["merges"]
    assert record["id"] == merged["data"]["merge_id"] and record["target"] == "Ebenezer Scrooge"
    assert client.post("/graph/unmerge", json={"merge_id": record["id"]}).status_code == 200
    assert "Scrooge" in client.get("/graph/label/list").json()
    assert client.post("/graph/unmerge", json={"merge_id": "m-none"}).status_code == 404
    assert (
        client.post(
            "/graph/entities/merge", json={"entities_to_change": [], "entity_to_change_into": "X"}
        ).status_code
        == 422
    )


def test_dedupe_report_then_apply_the_accepted_groups(client: httpx.Client) -> None:
    strict = client.get("/graph/dedupe").json()
    near = {p["b"] for p in strict["near_misses"]}
    assert strict["groups"] == [] and near == {"Scrooge", "Marley"}
    report = client.get("/graph/dedupe", params={"min_score": 0.3}).json()
    groups = [{"target": g["target"], "members": g["members"]} for g in report["groups"]]
    assert {"target": "Jacob Marley", "members": ["Marley"]} in groups and len(groups) == 2
    assert "Marley" in client.get("/graph/label/list").json()  # the report wrote nothing
    accepted = [g for g in groups if g["target"] == "Jacob Marley"]  # the client accepts one
    applied = client.post("/graph/dedupe/apply", json={"groups": accepted}).json()
    assert len(applied["merges"]) == 1
    labels = client.get("/graph/label/list").json()
    assert "Marley" not in labels and {"Scrooge", "Ebenezer Scrooge"} <= set(labels)
    origins = {m["origin"] for m in client.get("/graph/merges").json()["merges"]}
    assert origins == {"dedupe"}


def test_export_downloads_every_format(client: httpx.Client) -> None:
    as_json = client.get("/graph/export")
    assert as_json.headers["content-type"].startswith("application/json")
    data = json.loads(as_json.content)
    assert {e["name"] for e in data["entities"]} >= {"Scrooge", "London"}
    graphml = client.get("/graph/export", params={"format": "graphml"})
    assert b"<graphml" in graphml.content and b"Bob Cratchit" in graphml.content
    assert "Scrooge" in client.get("/graph/export", params={"format": "md"}).text
    for fmt in ("csv", "parquet"):
        reply = client.get("/graph/export", params={"format": fmt})
        assert reply.headers["content-disposition"] == f'attachment; filename="graph-{fmt}.zip"'
        names = zipfile.ZipFile(io.BytesIO(reply.content)).namelist()
        assert names and all(n.endswith(f".{fmt}") for n in names), names
    assert client.get("/graph/export", params={"format": "xlsx"}).status_code == 422
