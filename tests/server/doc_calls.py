"""Calls the document, query and graph tests share: insert and wait, await a job, list documents."""

from __future__ import annotations

from typing import Any

import httpx

CAROL = [
    "Ebenezer Scrooge is a miser in London. Bob Cratchit works for Scrooge at the counting house.",
    "Jacob Marley was the business partner of Scrooge. Marley died seven years ago in London.",
    "Fred is the nephew of Scrooge. Fred invites Scrooge to Christmas dinner in London.",
]


def wait_job(client: httpx.Client, job_id: str, seconds: float = 30.0) -> dict[str, Any]:
    """The job once it has ended (fails the test if it does not end in time)."""
    reply = client.get(f"/jobs/{job_id}", params={"wait": seconds})
    assert reply.status_code == 200, reply.text
    job = reply.json()
    assert job["status"] in ("succeeded", "failed", "cancelled"), job
    return job


def insert(client: httpx.Client, texts: list[str], **body: Any) -> dict[str, Any]:
    """Insert ``texts`` and wait for the job; the job's record (it must succeed)."""
    reply = client.post("/documents/texts", json={"texts": texts, **body})
    assert reply.status_code == 200, reply.text
    job = wait_job(client, reply.json()["job_id"])
    assert job["status"] == "succeeded", job
    return job


def documents(client: httpx.Client, **body: Any) -> list[dict[str, Any]]:
    """Every document (one page of up to 200)."""
    reply = client.post("/documents/paginated", json={"page_size": 200, **body})
    assert reply.status_code == 200, reply.text
    return list(reply.json()["documents"])


def upload(client: httpx.Client, name: str, content: bytes, **kwargs: Any) -> httpx.Response:
    return client.post(
        "/documents/upload", files=[("file", (name, content, "application/octet-stream"))], **kwargs
    )
