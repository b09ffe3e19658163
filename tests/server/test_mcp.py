"""The MCP tools through the official SDK's client: ``kgrag mcp`` on stdio, ``/mcp`` over HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from kgrag.server.compat import mcp_tools
from kgrag.server.compat.chat.names import MODES

from .compat_served import KEY_ALL, KEY_ALPHA, KEY_MAIN, bearer, compat_server
from .served import Served

TOOLS = {"query", "query_data", "insert_text", "list_documents", "delete_document", "get_entity"}
TEXT = "Marie Curie worked with Pierre Curie in Paris. Marie Curie discovered Polonium."
FAKE_ENV = {
    "KGRAG_LLM_PROVIDER": "fake",
    "KGRAG_EMBEDDING_PROVIDER": "fake",
    "KGRAG_EXTRACTOR": "llm",
}


def kgrag_command() -> list[str]:
    """The installed ``kgrag`` script beside this interpreter (else the module)."""
    script = Path(sys.executable).parent / "kgrag"
    return [str(script)] if script.exists() else [sys.executable, "-m", "kgrag.cli.main"]


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def exercise_every_tool(client: Client) -> None:
    """List the tools and call each on an empty index: insert, read, query, delete."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    assert tools["delete_document"].annotations.destructive_hint
    assert tools["query"].annotations.read_only_hint
    inserted = await call(client, "insert_text", text=TEXT, doc_id="curie.txt")
    assert inserted["ok"] and len(inserted["new"]) == 1
    listed = await call(client, "list_documents")
    assert listed["total"] == 1 and listed["documents"][0]["path"] == "curie.txt"
    answer = await call(client, "query", question="Who worked with Pierre Curie?", mode="local")
    assert "Marie Curie" in answer["answer"] and answer["references"]
    data = await call(client, "query_data", question="Who discovered Polonium?")
    assert "Marie Curie" in {e["entity_name"] for e in data["entities"]}
    entity = await call(client, "get_entity", name="pierre curie")
    assert entity["entity"]["name"] == "Pierre Curie"
    assert "Marie Curie" in {n["name"] for n in entity["neighbours"]}
    missing = await client.call_tool("get_entity", {"name": "Nobody At All"})
    assert missing.is_error and "no entity named" in missing.content[0].text
    deleted = await call(client, "delete_document", doc_id="curie.txt")
    assert deleted["deleted"] == inserted["new"] and deleted["entities_deleted"] > 0
    assert (await call(client, "list_documents"))["total"] == 0


def stdio_server(workdir: Path, *flags: str) -> StdioServerParameters:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(workdir.parent), **FAKE_ENV}
    command, *args = kgrag_command()
    return StdioServerParameters(
        command=command,
        args=[*args, "mcp", "--workdir", str(workdir), *flags],
        env=env,
        cwd=str(workdir.parent),
    )


async def test_kgrag_mcp_over_stdio_calls_every_tool(tmp_path: Path) -> None:
    async with Client(stdio_server(tmp_path / "index", "--create")) as client:
        await exercise_every_tool(client)


def test_kgrag_mcp_refuses_a_workdir_without_index(tmp_path: Path) -> None:
    done = subprocess.run(
        [*kgrag_command(), "mcp", "--workdir", str(tmp_path / "none")],
        env={**os.environ, **FAKE_ENV},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and "kgrag: error" in done.stderr and done.stdout == ""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with compat_server(tmp_path_factory.mktemp("mcp") / "w") as served:
        yield served


def http_client(served: Served, path: str, key: str = KEY_ALL) -> Client:
    http = httpx2.AsyncClient(headers=bearer(key), timeout=30.0)
    return Client(streamable_http_client(served.base_url + path, http_client=http))


async def test_mcp_over_http_calls_every_tool_in_a_new_workspace(served: Served) -> None:
    async with http_client(served, "/w/gamma/mcp") as client:
        await exercise_every_tool(client)
    async with httpx.AsyncClient(base_url=served.base_url, headers=bearer(KEY_ALL)) as http:
        jobs = (await http.get("/w/gamma/jobs")).json()["jobs"]
    titles = [(j["title"], j["status"]) for j in reversed(jobs)]  # the writes took their turn
    assert titles == [
        ("mcp: insert curie.txt", "succeeded"),
        ("mcp: delete curie.txt", "succeeded"),
    ]


async def test_the_workspace_comes_from_the_path(served: Served) -> None:
    async with http_client(served, "/mcp", KEY_MAIN) as main:
        answer = await call(main, "query", question="Who worked with Charles Babbage?")
    async with http_client(served, "/w/alpha/mcp", KEY_ALPHA) as alpha:
        other = await call(alpha, "query", question="Who developed COBOL?")
        documents = await call(alpha, "list_documents")
    assert "Charles Babbage" in answer["answer"] and "Grace Hopper" in other["answer"]
    assert documents["total"] == 1


def test_mcp_over_http_needs_the_key_and_the_workspace(served: Served) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with httpx.Client(base_url=served.base_url) as http:
        assert http.post("/mcp", json=ping).status_code == 401
        assert http.post("/mcp", json=ping, headers=bearer("not-a-key")).status_code == 401
        assert http.post("/w/alpha/mcp", json=ping, headers=bearer(KEY_MAIN)).status_code == 403
        header = {**bearer(KEY_MAIN), "X-Workspace": "alpha"}
        assert http.post("/mcp", json=ping, headers=header).status_code == 403


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "tests", "version": "1"},
    },
}


def test_an_open_server_refuses_rebound_hosts_and_origins(tmp_path: Path) -> None:
    accept = {"Accept": "application/json, text/event-stream"}
    with compat_server(tmp_path / "w", keys=False) as served:
        with httpx.Client(base_url=served.base_url, headers=accept) as http:
            assert http.post("/mcp", json=INITIALIZE).status_code == 200
            rebound = http.post("/mcp", json=INITIALIZE, headers={"Host": "evil.example:9621"})
            assert rebound.status_code == 421
            foreign = http.post("/mcp", json=INITIALIZE, headers={"Origin": "http://evil.example"})
            assert foreign.status_code == 403
            assert http.get("/mcp").status_code == 405  # stateless: no stream to open


def test_the_tools_know_the_same_modes_as_the_model_names() -> None:
    assert typing.get_args(mcp_tools.Mode) == MODES
