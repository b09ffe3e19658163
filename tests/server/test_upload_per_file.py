"""A multi-file upload is answered per file; refused files are listed as failed documents.

One ``.exe`` among four files used to refuse all four with a 415 listing
every supported extension, and a file the loader refused later (a corrupt
PDF) never appeared in the documents listing or the failed count.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from .conftest import StartServer
from .doc_calls import CAROL, documents, upload, wait_job


@pytest.fixture
def client(start_server: StartServer) -> Iterator[httpx.Client]:
    with start_server().client() as c:
        yield c


def _counts(client: httpx.Client) -> dict[str, int]:
    return dict(client.get("/documents/status_counts").json()["status_counts"])


def test_four_files_one_exe_three_indexed_one_refused_with_a_short_reason(
    client: httpx.Client,
) -> None:
    files = [
        ("files", (f"carol{i}.txt", text.encode(), "text/plain")) for i, text in enumerate(CAROL)
    ]
    files.insert(2, ("files", ("setup.exe", b"MZ\x90\x00", "application/octet-stream")))
    reply = client.post("/documents/upload", files=files)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["status"] == "partial_success" and body["track_id"] and body["job_id"]
    assert [a["name"] for a in body["accepted"]] == ["carol0.txt", "carol1.txt", "carol2.txt"]
    (refused,) = body["refused"]
    assert refused["name"] == "setup.exe" and refused["status"] == 415
    assert refused["reason"] == "unsupported file type '.exe'"  # not ~70 extensions
    assert "setup.exe" in body["message"]
    assert wait_job(client, body["job_id"])["status"] == "succeeded"
    listed = {d["metadata"].get("original_name", d["name"]): d for d in documents(client)}
    assert {n: d["status"] for n, d in listed.items()} == {
        "carol0.txt": "processed",
        "carol1.txt": "processed",
        "carol2.txt": "processed",
        "setup.exe": "failed",
    }
    assert listed["setup.exe"]["error_msg"] == "unsupported file type '.exe'"
    counts = _counts(client)
    assert counts["failed"] == 1 and counts["processed"] == 3 and counts["all"] == 4
    track = client.get(f"/documents/track_status/{body['track_id']}").json()
    assert track["status_summary"] == {"processed": 3, "failed": 1}


def test_a_file_the_loader_refuses_is_a_failed_document_until_deleted(
    client: httpx.Client,
) -> None:
    reply = upload(client, "corrupt.pdf", b"%PDF-1.4 this is no real pdf")
    assert reply.status_code == 200 and reply.json()["refused"] == []
    wait_job(client, reply.json()["job_id"])
    (doc,) = documents(client)
    assert doc["status"] == "failed" and doc["name"] == "corrupt.pdf" and doc["error_msg"]
    assert _counts(client)["failed"] == 1
    gone = client.request("DELETE", "/documents/delete_document", json={"doc_ids": [doc["id"]]})
    assert wait_job(client, gone.json()["job_id"])["result"]["deleted"] == [doc["id"]]
    assert documents(client) == [] and _counts(client)["failed"] == 0


def test_a_request_none_of_whose_files_is_kept_is_refused_and_listed(
    client: httpx.Client,
) -> None:
    files = [
        ("files", ("tool.exe", b"MZ", "x")),
        ("files", ("empty.txt", b"", "text/plain")),
    ]
    reply = client.post("/documents/upload", files=files)
    assert reply.status_code == 400  # two different refusals
    assert "'tool.exe': unsupported file type '.exe'" in reply.json()["detail"]
    assert "'empty.txt'" in reply.json()["detail"]
    alone = upload(client, "only.exe", b"MZ")
    assert (
        alone.status_code == 415
        and alone.json()["detail"] == "'only.exe': unsupported file type '.exe'"
    )
    for _ in range(50):  # the refusals are written by a job, in order
        if _counts(client)["failed"] == 3:
            break
        client.get("/jobs", params={"limit": 1})
    failed = {d["name"]: d["error_msg"] for d in documents(client, status_filter="failed")}
    assert set(failed) == {"tool.exe", "empty.txt", "only.exe"}
    cleared = client.request("DELETE", "/documents")
    assert cleared.status_code == 200 and _counts(client)["all"] == 0
