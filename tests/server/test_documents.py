"""The document routes over real HTTP: insert, upload, scan, list, track, delete, disable, supersede."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.ingest.pdf_fixture import minimal_pdf

from .doc_calls import CAROL, documents, insert, upload, wait_job
from .served import Served


def test_text_insert_is_listed_tracked_and_counted(server: Served) -> None:
    with server.client() as client:
        reply = client.post(
            "/documents/text",
            json={
                "text": f"  {CAROL[0]}  ",
                "file_source": "carol.txt",
                "metadata": {"book": "carol"},
            },
        )
        assert reply.status_code == 200
        body = reply.json()
        assert body["status"] == "success" and body["track_id"].startswith("insert_")
        job = wait_job(client, body["job_id"])
        assert job["status"] == "succeeded" and job["track_id"] == body["track_id"]
        assert job["progress"]["documents_done"] == 1 and job["result"]["processed"]
        (doc,) = documents(client)
        assert doc["file_path"] == "carol.txt" and doc["metadata"] == {"book": "carol"}
        assert doc["status"] == "processed" and doc["chunks_count"] == 1
        assert doc["content_length"] == len(CAROL[0])  # the text was stripped
        track = client.get(f"/documents/track_status/{body['track_id']}").json()
        assert track["total_count"] == 1 and track["status_summary"] == {"processed": 1}
        assert track["documents"][0]["track_id"] == body["track_id"]
        counts = client.get("/documents/status_counts").json()["status_counts"]
        assert counts["processed"] == 1 and counts["all"] == 1 and counts["failed"] == 0
        assert client.get("/documents/track_status/insert_unknown").status_code == 404


def test_texts_take_sources_metadata_and_ids_one_per_text(server: Served) -> None:
    with server.client() as client:
        insert(
            client, CAROL[:2], file_sources=["a.txt", "b.txt"], metadata=[{"n": "1"}, {"n": "2"}]
        )
        by_path = {d["file_path"]: d for d in documents(client)}
        assert by_path["a.txt"]["metadata"] == {"n": "1"} and by_path["b.txt"]["metadata"] == {
            "n": "2"
        }
        mismatched = client.post("/documents/texts", json={"texts": CAROL[:2], "metadata": [{}]})
        assert mismatched.status_code == 422
        assert client.post("/documents/texts", json={"texts": ["  "]}).status_code == 422
        assert client.post("/documents/text", json={"text": ""}).status_code == 422
        insert(client, ["Fred lives in London."], ids=["fred-note"])
        insert(client, ["Fred moved to Paris."], ids=["fred-note"])  # same id: supersedes
        notes = [d for d in documents(client) if "Fred" in d["content_summary"]]
        assert [d["content_summary"] for d in notes] == ["Fred moved to Paris."]


def test_pagination_filters_search_and_sorting(server: Served) -> None:
    with server.client() as client:
        texts = [f"Visitor Number{i} came to see Scrooge in London." for i in range(12)]
        insert(client, texts, file_sources=[f"visit-{i:02d}.txt" for i in range(12)])
        page = client.post(
            "/documents/paginated",
            json={"page": 2, "page_size": 10, "sort_field": "file_path", "sort_direction": "asc"},
        ).json()
        assert [d["file_path"] for d in page["documents"]] == ["visit-10.txt", "visit-11.txt"]
        assert page["pagination"] == {
            "page": 2,
            "page_size": 10,
            "total_count": 12,
            "total_pages": 2,
            "has_next": False,
            "has_prev": True,
        }
        found = documents(client, search="VISIT-07")
        assert [d["file_path"] for d in found] == ["visit-07.txt"]
        assert (
            documents(client, status_filter="PROCESSED", search="number3")[0]["file_path"]
            == "visit-03.txt"
        )
        assert documents(client, status_filters=["failed", "pending"]) == []
        desc = documents(client, sort_field="file_path", sort_direction="desc")
        assert desc[0]["file_path"] == "visit-11.txt"
        for bad in (
            {"page_size": 9},
            {"page_size": 201},
            {"page": 0},
            {"sort_field": "size"},
            {"status_filter": "lost"},
        ):
            assert client.post("/documents/paginated", json=bad).status_code == 422, bad


def test_upload_keeps_the_name_as_metadata_and_indexes_the_file(server: Served) -> None:
    with server.client() as client:
        pdf = minimal_pdf(["Tiny Tim is the son of Bob Cratchit.", "Tiny Tim lives in London."])
        reply = client.post(
            "/documents/upload",
            files=[
                ("file", ("Tiny Tim.pdf", pdf, "application/pdf")),
                ("file", ("notes.md", b"# Notes\nFred visits Scrooge.\n", "text/markdown")),
            ],
        )
        assert reply.status_code == 200, reply.text
        body = reply.json()
        assert body["status"] == "success" and body["track_id"].startswith("upload_")
        assert wait_job(client, body["job_id"])["status"] == "succeeded"
        stored = sorted(p.name for p in (server.workdir / "inputs").iterdir())
        assert stored == sorted(body["files"]) and len(stored) == 2
        assert all(re.fullmatch(r"[0-9a-f]{12}-[A-Za-z0-9._-]+\.(pdf|md)", n) for n in stored)
        docs = {d["metadata"]["original_name"]: d for d in documents(client)}
        assert set(docs) == {"Tiny Tim.pdf", "notes.md"}
        assert docs["Tiny Tim.pdf"]["file_path"] in stored  # shown inside the input folder
        assert "Tiny Tim" in docs["Tiny Tim.pdf"]["content_summary"]
        track = client.get(f"/documents/track_status/{body['track_id']}").json()
        assert track["status_summary"] == {"processed": 2}


def test_scan_indexes_the_input_folder_and_names_refused_files(server: Served) -> None:
    inputs = server.workdir / "inputs" / "notes"
    inputs.mkdir(parents=True)
    (inputs / "belle.md").write_text("Belle was engaged to young Scrooge.\n", encoding="utf-8")
    (inputs / "empty.txt").write_text("   \n", encoding="utf-8")
    with server.client() as client:
        reply = client.post("/documents/scan")
        assert reply.json()["status"] == "scanning_started"
        job = wait_job(client, reply.json()["job_id"])
        assert job["status"] == "succeeded" and len(job["result"]["processed"]) == 1
        listed = {d["status"]: d for d in documents(client)}  # refused: a failed document
        doc = listed["processed"]
        assert doc["file_path"] == "notes/belle.md"  # never the server's absolute path
        assert listed["failed"]["file_path"] == "notes/empty.txt"
        track = client.get(f"/documents/scan/status/{reply.json()['track_id']}").json()
        failed = [d for d in track["documents"] if d["status"] == "failed"]
        assert [d["file_path"] for d in failed] == ["notes/empty.txt"]
        assert "no text" in failed[0]["error_msg"]
        again = wait_job(client, client.post("/documents/scan").json()["job_id"])
        assert again["result"]["unchanged"] == [doc["id"]]


def test_delete_removes_documents_and_optionally_their_files(server: Served) -> None:
    with server.client() as client:
        insert(client, CAROL[:2], file_sources=["a.txt", "b.txt"])
        reply = upload(client, "fred.txt", CAROL[2].encode())
        wait_job(client, reply.json()["job_id"])
        ids = {d["file_path"]: d["id"] for d in documents(client)}
        fred = next(i for p, i in ids.items() if p.endswith("-fred.txt"))
        gone = client.request(
            "DELETE",
            "/documents/delete_document",
            json={"doc_ids": [ids["a.txt"], fred, "doc-missing"], "delete_file": True},
        )
        assert gone.status_code == 200
        assert gone.json()["status"] == "deletion_started" and gone.json()["doc_id"].startswith(
            ids["a.txt"]
        )
        result = wait_job(client, gone.json()["job_id"])["result"]
        assert sorted(result["deleted"]) == sorted([ids["a.txt"], fred])
        assert result["not_found"] == ["doc-missing"] and len(result["files_deleted"]) == 1
        assert [d["file_path"] for d in documents(client)] == ["b.txt"]
        assert list((server.workdir / "inputs").iterdir()) == []
        labels = client.get("/graph/label/list").json()
        assert "Bob Cratchit" not in labels and "Jacob Marley" in labels
        bad = client.request("DELETE", "/documents/delete_document", json={"doc_ids": ["x", "x"]})
        assert bad.status_code == 422


def test_insert_after_delete_keeps_the_document(server: Served) -> None:
    with server.client() as client:
        insert(client, [CAROL[0]], file_sources=["carol.txt"])
        (doc,) = documents(client)
        deleting = client.request(
            "DELETE", "/documents/delete_document", json={"doc_ids": [doc["id"]]}
        )
        again = client.post("/documents/text", json={"text": CAROL[0], "file_source": "carol.txt"})
        assert wait_job(client, deleting.json()["job_id"])["result"]["deleted"] == [doc["id"]]
        assert wait_job(client, again.json()["job_id"])["result"]["new"] == [doc["id"]]
        (back,) = documents(client)
        assert back["id"] == doc["id"] and back["status"] == "processed"
        assert "Bob Cratchit" in client.get("/graph/label/list").json()


def _chunk_docs(client, question: str) -> set[str]:
    data = client.post(
        "/query/data",
        json={"query": question, "ll_keywords": ["Scrooge"], "hl_keywords": ["miser"]},
    )
    return {c["doc_id"] for c in data.json()["data"]["chunks"]}


def test_disabled_documents_are_not_retrieved_until_enabled(server: Served) -> None:
    with server.client() as client:
        insert(client, CAROL, file_sources=["a.txt", "b.txt", "c.txt"])
        ids = {d["file_path"]: d["id"] for d in documents(client)}
        assert ids["a.txt"] in _chunk_docs(client, "Who is Scrooge?")
        off = client.post("/documents/disable", json={"doc_ids": [ids["a.txt"], "doc-none"]}).json()
        assert off["disabled"] == [ids["a.txt"]] and off["not_found"] == ["doc-none"]
        assert ids["a.txt"] not in _chunk_docs(client, "Who is Scrooge?")
        assert {d["file_path"]: d["disabled"] for d in documents(client)}["a.txt"] is True
        on = client.post("/documents/enable", json={"doc_ids": [ids["a.txt"]]}).json()
        assert on["enabled"] == [ids["a.txt"]]
        assert ids["a.txt"] in _chunk_docs(client, "Who is Scrooge?")


def test_supersede_by_text(server: Served) -> None:
    with server.client() as client:
        insert(client, [CAROL[0]], file_sources=["carol.txt"])
        (old,) = documents(client)
        text = {
            "text": "Ebenezer Scrooge keeps Christmas in Camden Town.",
            "file_source": "carol-v2.txt",
        }
        reply = client.post(f"/documents/{old['id']}/supersede", json=text)
        assert reply.status_code == 200
        assert wait_job(client, reply.json()["job_id"])["status"] == "succeeded"
        (new,) = documents(client)
        assert new["id"] != old["id"] and new["file_path"] == "carol-v2.txt"
        labels = client.get("/graph/label/list").json()
        assert "Camden Town" in labels and "Bob Cratchit" not in labels
        assert (
            client.post("/documents/doc-nothing/supersede", json={"text": "x"}).status_code == 404
        )
        assert client.post(f"/documents/{new['id']}/supersede", json={"nope": 1}).status_code == 422


def test_supersede_by_file(server: Served) -> None:
    with server.client() as client:
        wait_job(client, upload(client, "carol.txt", CAROL[0].encode()).json()["job_id"])
        (old,) = documents(client)
        content = b"# Carol\nScrooge buys a turkey for the Cratchits.\n"
        files = [("file", ("carol-v3.md", content, "text/markdown"))]
        reply = client.post(f"/documents/{old['id']}/supersede", files=files)
        assert reply.status_code == 200
        assert wait_job(client, reply.json()["job_id"])["status"] == "succeeded"
        (new,) = documents(client)
        assert new["metadata"] == {"original_name": "carol-v3.md"}
        assert "turkey" in new["content_summary"]
        (kept,) = (server.workdir / "inputs").iterdir()  # the old version's file is gone
        assert kept.name == new["file_path"]
        rescan = wait_job(client, client.post("/documents/scan").json()["job_id"])
        assert rescan["result"]["new"] == [] and len(documents(client)) == 1
        wrong = client.post(f"/documents/{new['id']}/supersede", files=[("other", ("a.txt", b"x"))])
        assert wrong.status_code == 422


def test_reprocess_pipeline_status_and_jobs(server: Served) -> None:
    with server.client() as client:
        job = insert(client, CAROL[:1])
        reply = client.post("/documents/reprocess_failed").json()
        assert reply["status"] == "reprocessing_started"
        assert wait_job(client, reply["job_id"])["result"]["processed"] == []
        status = client.get("/documents/pipeline_status").json()
        assert (
            status["busy"] is False and status["request_pending"] is False and status["job"] is None
        )
        assert any("Indexing 1 text(s)" in m for m in status["history_messages"])
        assert "Reprocessing failed documents" in status["latest_message"]
        listed = client.get("/jobs").json()["jobs"]
        assert [j["job_id"] for j in listed][:2] == [reply["job_id"], job["job_id"]]
        assert client.get("/jobs/job-unknown").status_code == 404
        assert (
            client.get(f"/w/other/jobs/{job['job_id']}").status_code == 404
        )  # another workspace's


@pytest.mark.parametrize("server", ["key"], indirect=True)
def test_workspaces_keep_their_documents_apart(server: Served) -> None:
    with server.client() as client:
        insert(client, CAROL[:1])
    headers = server.headers(server.alpha_credential, "alpha")
    with httpx.Client(base_url=server.base_url, headers=headers, timeout=30) as alpha:
        assert documents(alpha) == []
        insert(alpha, ["Belle lives in Richmond."])
        assert [d["content_summary"] for d in documents(alpha)] == ["Belle lives in Richmond."]
        assert (
            alpha.post("/documents/paginated", json={}, headers={"X-Workspace": "beta"}).status_code
            == 403
        )
        wait_job(alpha, upload(alpha, "belle.txt", b"Belle marries another man.").json()["job_id"])
    assert len(list((server.workdir / "workspaces" / "alpha" / "inputs").iterdir())) == 1
    assert not (server.workdir / "inputs").exists()


def test_the_reader_follows_the_language_the_first_run_settles(server: Served) -> None:
    def reader_language() -> str:
        return server.app.state.workspaces._open["default"].settings.extraction.language

    with server.client() as client:
        assert client.post("/query/data", json={"query": "王蕴住在哪里？"}).status_code == 200
        assert reader_language() == "English"  # opened on an empty index
        insert(client, ["王蕴是东汉末年的官员。王蕴住在洛阳。曹操认识王蕴。"])
        assert reader_language() == "Chinese"
        reply = client.post("/query/data", json={"query": "王蕴住在哪里？"}).json()
        assert reply["data"]["chunks"] and "王蕴" in reply["data"]["chunks"][0]["content"]
