"""A failing chat model never answers as if it were the answer, and never shows its address.

The index is built with the fake models, then served with the chat model
pointed at a closed port (connections refused) or at the fake
OpenAI-compatible server answering 500 to every call. Every route that
answers a question gives the extractive answer marked as such (its note,
``extractive`` and ``fallback_reason``; ``kgrag`` beside the OpenAI and
Ollama shapes), or, in mode ``bypass`` where nothing can stand in, an
error status in the route's error shape. The sweep (``body_sweep.py``)
also checks every body for the endpoint's address.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kgrag.api.facade import KGRag
from tests.support.fake_openai import fake_openai
from tests.support.settings import fake_settings

from .body_sweep import BodySweep
from .conftest import StartServer
from .doc_calls import documents, wait_job
from .served import Served

TEXT = "Ada Lovelace worked with Charles Babbage in London. Babbage designed the Analytical Engine."
QUESTION = "Who worked with Charles Babbage?"
NOTE = "so this answer is extractive"


@pytest.fixture(params=["refused", "http-500"])
def failing(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    start_server: StartServer,
    body_sweep: BodySweep,
) -> Iterator[tuple[Served, str]]:
    """A server on an indexed workdir whose chat model fails; and the model's base URL."""
    workdir = tmp_path / "w"
    asyncio.run(_index(workdir))
    with fake_openai(error_rate=1.0) as fake:
        url = (
            f"http://127.0.0.1:{closed_port()}/v1" if request.param == "refused" else fake.base_url
        )
        body_sweep.forbid_address(url)
        model = {"llm_provider": "openai", "llm_base_url": url, "llm_api_key": "sk-test"}
        # the bound ends the retries of the failing model: a short one ends them sooner
        yield start_server("none", workdir, query_llm_timeout=0.3, **model), url


def closed_port() -> int:
    """A local port nobody listens on (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _index(workdir: Path) -> None:
    async with KGRag(fake_settings(workdir)) as rag:
        await rag.insert(TEXT)


def _no_address(text: str, url: str) -> None:
    address = httpx.URL(url)
    assert f"{address.host}:{address.port}" not in text and url not in text, text


def _extractive(answer: str, marker: dict[str, Any], url: str) -> None:
    assert NOTE in answer and "Babbage" in answer, answer
    assert marker["extractive"] is True and marker["fallback_reason"], marker
    assert marker["fallback_reason"].startswith("the chat model"), marker
    _no_address(answer + json.dumps(marker), url)


def test_query_gives_the_marked_extractive_answer(failing: tuple[Served, str]) -> None:
    served, url = failing
    with served.client() as http:
        whole = http.post("/query", json={"query": QUESTION, "mode": "mix"})
        streamed = http.post("/query/stream", json={"query": QUESTION, "mode": "mix"})
    assert whole.status_code == 200, whole.text
    body = whole.json()
    assert body["llm_generated"] is False
    _extractive(body["response"], body, url)
    lines = [json.loads(line) for line in streamed.text.splitlines()]
    done = lines[-1]
    assert done["done"] and done["extractive"] and not done["llm_generated"], lines
    _extractive("".join(x.get("response", "") for x in lines), done, url)


def test_query_in_bypass_mode_is_an_error_status(failing: tuple[Served, str]) -> None:
    served, url = failing
    with served.client() as http:
        whole = http.post("/query", json={"query": QUESTION, "mode": "bypass"})
        streamed = http.post("/query/stream", json={"query": QUESTION, "mode": "bypass"})
    for answer in (whole, streamed):
        assert answer.status_code in (502, 503, 504), answer.text
        detail = answer.json()["detail"]
        assert detail.startswith("the chat model") and "bypass" in detail, detail
        _no_address(answer.text, url)


def test_openai_chat_gives_the_marked_extractive_answer(failing: tuple[Served, str]) -> None:
    served, url = failing
    ask = {"model": "kgrag", "messages": [{"role": "user", "content": QUESTION}]}
    with served.client() as http:
        whole = http.post("/v1/chat/completions", json=ask)
        streamed = http.post("/v1/chat/completions", json=ask | {"stream": True})
        bypass = http.post("/v1/chat/completions", json=ask | {"model": "kgrag:bypass"})
    assert whole.status_code == 200, whole.text
    _extractive(whole.json()["choices"][0]["message"]["content"], whole.json()["kgrag"], url)
    events = [
        json.loads(line[6:]) for line in streamed.text.splitlines() if line.startswith("data: {")
    ]
    stop = next(e for e in events if e["choices"] and e["choices"][0]["finish_reason"] == "stop")
    text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"])
    _extractive(text, stop["kgrag"], url)
    assert bypass.status_code in (502, 503, 504), bypass.text
    assert bypass.json()["error"]["type"] == "server_error"
    _no_address(bypass.text, url)


@pytest.mark.parametrize("route", ["chat", "generate"])
def test_ollama_gives_the_marked_extractive_answer(failing: tuple[Served, str], route: str) -> None:
    served, url = failing
    if route == "chat":
        ask: dict[str, Any] = {"model": "kgrag:latest", "messages": [{"role": "user"}]}
        ask["messages"][0]["content"] = QUESTION
    else:
        ask = {"model": "kgrag:latest", "prompt": QUESTION}
    with served.client() as http:
        whole = http.post(f"/api/{route}", json=ask | {"stream": False})
        streamed = http.post(f"/api/{route}", json=ask)
        bypass = http.post(f"/api/{route}", json=ask | {"model": "kgrag:bypass", "stream": False})

    def text_of(line: dict[str, Any]) -> str:
        return str(line["message"]["content"] if route == "chat" else line["response"])

    assert whole.status_code == 200, whole.text
    _extractive(text_of(whole.json()), whole.json()["kgrag"], url)
    lines = [json.loads(line) for line in streamed.text.splitlines()]
    assert lines[-1]["done"] is True
    _extractive("".join(text_of(x) for x in lines), lines[-1]["kgrag"], url)
    assert bypass.status_code in (502, 503, 504), bypass.text
    assert bypass.json()["error"].startswith("the chat model")
    _no_address(bypass.text, url)


def test_indexing_with_a_dead_model_shows_no_address(
    tmp_path: Path, start_server: StartServer, body_sweep: BodySweep
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    body_sweep.forbid_address(url)
    model = {"llm_provider": "openai", "llm_base_url": url, "llm_api_key": "sk-test"}
    served = start_server("none", tmp_path / "w", llm_max_retries=0, **model)
    with served.client() as http:
        reply = http.post("/documents/texts", json={"texts": [TEXT]})
        job = wait_job(http, reply.json()["job_id"])
        listed = documents(http)
        pipeline = http.get("/documents/pipeline_status").json()
    failed = [d for d in listed if d["status"] == "failed"]
    assert failed and failed[0]["error_msg"], listed  # the document failed, and says why
    shown = json.dumps([job, listed, pipeline])
    _no_address(shown, url)
    assert "openai:gpt-4o-mini" in failed[0]["error_msg"]  # the model is named, not where it is
