"""The server's document jobs and MCP's insert take the one write path (IndexingService).

The service tells each call to its watchers (``kgrag.indexing.service.watch``):
an upload, a text insert and a folder scan over real HTTP each show up as
one index run, with the documents they indexed and the refusals they
recorded. A file the loader refuses is one record: the server lists it as
a failed document and ``kgrag status`` (``KGRag.status``) names it.
"""

from __future__ import annotations

from typing import Any

from kgrag.api.facade import KGRag
from kgrag.indexing.service import watch
from kgrag.server.compat.mcp_tools import Direct, Tools

from .doc_calls import CAROL, documents, insert, upload, wait_job
from .served import Served


def test_upload_insert_and_scan_run_through_the_service(server: Served) -> None:
    notes = server.workdir / "inputs" / "notes"
    notes.mkdir(parents=True)
    (notes / "belle.md").write_text("Belle was engaged to young Scrooge.\n", encoding="utf-8")
    with server.client() as client, watch() as runs:
        inserted = insert(client, CAROL[:1], file_sources=["carol.txt"])
        uploaded = wait_job(client, upload(client, "fred.txt", CAROL[2].encode()).json()["job_id"])
        scanned = wait_job(client, client.post("/documents/scan").json()["job_id"])
    index_runs = [r for r in runs if r.kind == "index"]
    assert len(index_runs) == 3
    assert list(index_runs[0].documents) == inserted["result"]["processed"]
    assert list(index_runs[1].documents) == uploaded["result"]["processed"]
    assert set(scanned["result"]["processed"]) <= set(index_runs[2].documents)
    assert {r.kind for r in runs} <= {"index", "track"}  # tracks are saved through it too


async def test_a_refused_upload_is_one_record_for_the_listing_and_status(server: Served) -> None:
    with server.client() as client, watch() as runs:
        job = wait_job(client, upload(client, "empty.txt", b"   \n").json()["job_id"])
        assert job["status"] == "succeeded" and job["result"]["load_errors"]
        [failed] = documents(client, status_filters=["failed"])
    [run] = [r for r in runs if r.kind == "index"]
    assert run.refused == (failed["id"],) and run.documents == ()
    assert failed["file_path"] == "empty.txt" and "no text" in failed["error_msg"]
    async with KGRag(server.settings) as rag:  # what `kgrag status` reads
        status = (await rag.status())["rejected_inputs"]
    [(path, reason)] = status.items()
    assert path.endswith("empty.txt") and reason == failed["error_msg"]


async def test_mcp_insert_runs_through_the_service(server: Served) -> None:
    async with KGRag(server.settings) as rag:

        async def source(_ctx: Any) -> Direct:
            return Direct(rag)

        with watch() as runs:
            result = await Tools(source).insert_text(CAROL[1], None, doc_id="marley.txt")  # type: ignore[arg-type]
    assert result["ok"] and [r.kind for r in runs] == ["index"]
    assert runs[0].documents == tuple(result["new"])
