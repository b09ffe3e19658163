"""Indexing runs in the background: queries and uploads are served meanwhile, and see only commits.

The chat model is the project's fake OpenAI server with a latency, so a
run of a few documents lasts long enough for the test to query while it
runs; queries give their keywords (no chat call), so they answer at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kgrag.server.app import ServerOptions, create_app
from tests.synth import run_synth

from .doc_calls import CAROL, insert, wait_job
from .served import make_settings, running

BATCH = [f"Traveller Name{i} visits Zanzibar Harbour{i} with Captain Nemo." for i in range(6)]


@pytest.fixture
def slow_server(tmp_path: Path) -> Iterator[httpx.Client]:
    """A server whose chat model answers after 0.15 s (embeddings stay in-process)."""
    with run_synth("--latency", "0.15") as base_url:
        settings = make_settings(tmp_path / "w").with_overrides(
            llm_provider="openai", llm_base_url=base_url, llm_api_key="test", max_parallel_insert=2
        )
        with running(create_app(ServerOptions.from_settings(settings))) as url:
            with httpx.Client(base_url=url, timeout=30) as client:
                yield client


def _retrieved(client: httpx.Client) -> set[str]:
    body = {
        "query": "Who visits Zanzibar?",
        "ll_keywords": ["Captain Nemo", "Zanzibar"],
        "hl_keywords": ["visit"],
    }
    reply = client.post("/query/data", json=body)
    assert reply.status_code == 200, reply.text
    return {c["doc_id"] for c in reply.json()["data"]["chunks"]}


def _processed(client: httpx.Client) -> set[str]:
    reply = client.post(
        "/documents/paginated", json={"page_size": 200, "status_filter": "processed"}
    )
    return {d["id"] for d in reply.json()["documents"]}


def test_queries_see_only_committed_documents_while_indexing_runs(
    slow_server: httpx.Client,
) -> None:
    client = slow_server
    insert(client, CAROL[:1])
    running_job = client.post("/documents/texts", json={"texts": BATCH}).json()["job_id"]
    overlapped = 0
    while True:
        retrieved = _retrieved(client)
        state = client.get(f"/jobs/{running_job}").json()["status"]
        processed = _processed(client)  # read after the query: may only have grown
        assert retrieved <= processed, "a query saw a document that was not committed"
        overlapped += state == "running"
        if state != "running" and state != "queued":
            break
    assert state == "succeeded"
    assert overlapped >= 1, "no query ran while the indexing job did"
    assert len(_retrieved(client)) > 1  # the batch is retrievable once committed


def test_uploads_and_queries_are_served_while_a_job_runs(slow_server: httpx.Client) -> None:
    client = slow_server
    first = client.post("/documents/texts", json={"texts": BATCH}).json()["job_id"]
    upload = client.post(
        "/documents/upload", files=[("file", ("fred.txt", CAROL[2].encode(), "text/plain"))]
    )
    assert upload.status_code == 200
    status = client.get("/documents/pipeline_status").json()
    assert client.get(f"/jobs/{first}").json()["status"] in ("queued", "running")
    assert status["busy"] is True and status["request_pending"] is True
    assert [j["job_id"] for j in status["queued"]] == [upload.json()["job_id"]]
    assert (
        client.post("/query", json={"query": "Who is Fred?", "mode": "bypass"}).status_code == 200
    )
    assert wait_job(client, first)["status"] == "succeeded"
    assert wait_job(client, upload.json()["job_id"])["status"] == "succeeded"
    assert client.get("/documents/status_counts").json()["status_counts"]["processed"] == 7
