"""Goldens of the server's LightRAG-compatible routes: a fixed session of requests, recorded.

The server is the real app (``kgrag.server.app.create_app``) on a fresh
workdir with the fake models, called in process (Starlette's test client,
lifespan included). Each request is written with its status, content type
and body; streamed bodies are recorded line by line.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from kgrag import Settings
from kgrag.server.app import ServerOptions, create_app

from .normalise import dump_json, scrub

FAKE = {"llm_provider": "fake", "embedding_provider": "fake", "extractor": "llm"}
TEXTS = [
    "Elon Musk leads Tesla. Tesla builds electric cars in Austin.",
    "Elon Musk founded SpaceX. SpaceX launches Falcon rockets from Florida.",
]
QUESTION = "What does Tesla build?"
CHAT = [{"role": "user", "content": QUESTION}]
LOCAL_CHAT = [{"role": "user", "content": "/local " + QUESTION}]
ONE_TEXT = {"text": "Tesla opened a factory in Berlin.", "file_source": "berlin.txt"}
PAGE = {"status_filter": "PROCESSED", "page": 1, "page_size": 10, "sort_field": "file_path"}
UPLOAD = {"file": ("document.txt", b"Falcon rockets land on drone ships.")}

# (name, method, path, keyword arguments of the request); a job id in the
# reply is awaited before the next request (indexing runs on the job thread).
REQUESTS: list[tuple[str, str, str, dict[str, Any]]] = [
    ("health", "GET", "/health", {}),
    ("texts", "POST", "/documents/texts", {"json": {"texts": TEXTS, "file_sources": ["tesla.txt"]}}),
    ("text", "POST", "/documents/text", {"json": ONE_TEXT}),
    ("documents", "GET", "/documents", {}),
    ("paginated", "POST", "/documents/paginated", {"json": PAGE | {"sort_direction": "asc"}}),
    ("status-counts", "GET", "/documents/status_counts", {}),
    ("pipeline-status", "GET", "/documents/pipeline_status", {}),
    ("query-hybrid", "POST", "/query", {"json": {"query": QUESTION, "mode": "hybrid"}}),
    ("query-mix-refs", "POST", "/query", {"json": {"query": QUESTION, "mode": "mix", "include_references": True}}),
    ("query-naive-context", "POST", "/query",
     {"json": {"query": QUESTION, "mode": "naive", "only_need_context": True}}),
    ("query-stream", "POST", "/query/stream", {"json": {"query": "Who leads Tesla?", "mode": "mix", "stream": True}}),
    ("query-data-local", "POST", "/query/data", {"json": {"query": "Who leads Tesla?", "mode": "local", "top_k": 10}}),
    ("query-data-global", "POST", "/query/data", {"json": {"query": "Who leads Tesla?", "mode": "global"}}),
    ("labels", "GET", "/graph/label/list", {}),
    ("labels-popular", "GET", "/graph/label/popular", {"params": {"limit": 300}}),
    ("labels-search", "GET", "/graph/label/search", {"params": {"q": "tes", "limit": 50}}),
    ("subgraph", "GET", "/graphs", {"params": {"label": "Tesla", "max_depth": 3, "max_nodes": 1000}}),
    ("entity-exists", "GET", "/graph/entity/exists", {"params": {"name": "Tesla"}}),
    ("ollama-version", "GET", "/api/version", {}),
    ("ollama-tags", "GET", "/api/tags", {}),
    ("ollama-chat", "POST", "/api/chat", {"json": {"model": "kgrag:latest", "messages": CHAT, "stream": False}}),
    ("ollama-chat-stream", "POST", "/api/chat", {"json": {"model": "kgrag:latest", "messages": CHAT}}),
    ("ollama-chat-local", "POST", "/api/chat",
     {"json": {"model": "kgrag:latest", "messages": LOCAL_CHAT, "stream": False}}),
    ("openai-models", "GET", "/v1/models", {}),
    ("openai-chat", "POST", "/v1/chat/completions", {"json": {"model": "kgrag", "messages": CHAT}}),
    ("openai-chat-stream", "POST", "/v1/chat/completions",
     {"json": {"model": "kgrag", "messages": CHAT, "stream": True}}),
    ("delete", "DELETE", "/documents/delete_document", {"json": {"doc_ids": ["<first>"]}}),
    ("documents-after-delete", "GET", "/documents", {}),
    ("upload", "POST", "/documents/upload", {"files": UPLOAD}),
    ("track-status", "GET", "/documents/track_status/<upload>", {}),
]  # fmt: skip
# An uploaded file is stored under a random prefix, and its document id
# follows from that name: both are replaced in the records after the upload.
_UPLOADED = re.compile(r"\b[0-9a-f]{12}-document\.txt")
_DOC_ID = re.compile(r"\bdoc-[0-9a-f]{32}\b")


def _body(reply: Any) -> Any:
    kind = reply.headers.get("content-type", "").split(";")[0]
    if kind == "application/json":
        return reply.json()
    lines = [line for line in reply.text.splitlines() if line.strip()]
    if kind in ("application/x-ndjson", "text/event-stream"):
        parsed = []
        for line in lines:
            data = line.removeprefix("data: ")
            try:
                parsed.append(json.loads(data))
            except ValueError:
                parsed.append(line)
        return parsed
    return reply.text


def _call(client: TestClient, method: str, path: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    reply = client.request(method, path, **kwargs)
    body = _body(reply)
    if method == "POST" and isinstance(body, dict) and body.get("job_id"):
        job = client.get(f"/jobs/{body['job_id']}", params={"wait": 30}).json()
        body = {"reply": body, "job_status": job.get("status")}
    return {
        "status": reply.status_code,
        "content_type": reply.headers.get("content-type"),
        "body": body,
    }


def _first_doc(client: TestClient) -> str:
    page = client.post("/documents/paginated", json={"sort_field": "file_path"}).json()
    return str(page["documents"][0]["id"])


def write_http(out: Path) -> None:
    """One JSON file per request, named ``NN-name.json`` in session order."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kgrag-golden-") as tmp:
        roots = [tmp, str(Path(tmp).resolve())]
        app = create_app(ServerOptions(Settings(workdir=Path(tmp) / "workdir", **FAKE)))
        _session(app, out, roots)


def _session(app: Any, out: Path, roots: list[str]) -> None:
    track = ""
    with TestClient(app) as client:
        for n, (name, method, path, kwargs) in enumerate(REQUESTS):
            if kwargs.get("json", {}).get("doc_ids") == ["<first>"]:
                kwargs = {"json": {"doc_ids": [_first_doc(client)]}}
            record: dict[str, Any] = {
                "request": [method, path, scrub(kwargs.get("json") or kwargs.get("params"))]
            }
            record |= _call(client, method, path.replace("<upload>", track), kwargs)
            text = dump_json(record, roots)
            if name == "upload":
                track = str(record["body"]["reply"]["track_id"])
            if track:
                text = _DOC_ID.sub("doc-<UPLOADED>", _UPLOADED.sub("<RANDOM>-document.txt", text))
            (out / f"{n:02d}-{name}.json").write_text(text, encoding="utf-8")
