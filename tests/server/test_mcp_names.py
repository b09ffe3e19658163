"""The MCP tools take back the names ``list_documents`` gives, through the official client.

Before, ``delete_document("joe.txt")`` failed although ``list_documents``
listed the document as ``joe.txt``, and a file's listing carried its
absolute path on the serving machine.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver.exceptions import ToolError

from kgrag.api.facade import KGRag
from kgrag.errors import ModelServerError, StorageError
from kgrag.server.compat.mcp_tools import Direct, _reported, build_mcp
from tests.indexing.lifecycle_corpus import lifecycle_settings

TEXT = "Marie Curie worked with Pierre Curie in Paris. Marie Curie discovered Polonium."


@pytest.fixture
async def rag(tmp_path: Path) -> AsyncIterator[KGRag]:
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        yield rag


def client(rag: KGRag) -> Client:
    async def source(_ctx: Any) -> Direct:
        return Direct(rag)

    return Client(build_mcp(source))


async def call(c: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await c.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def test_delete_document_takes_the_path_list_documents_shows(rag: KGRag) -> None:
    async with client(rag) as c:
        inserted = await call(c, "insert_text", text=TEXT, file_path="joe.txt")
        [doc] = (await call(c, "list_documents"))["documents"]
        assert doc["path"] == "joe.txt"
        deleted = await call(c, "delete_document", doc_id="joe.txt")
        assert deleted["deleted"] == inserted["new"] and doc["name"] == "joe.txt"
        assert (await call(c, "list_documents"))["total"] == 0


async def test_files_are_listed_by_name_never_by_absolute_path(rag: KGRag, tmp_path: Path) -> None:
    for folder, text in (("a", TEXT), ("b", "Ada Lovelace wrote about the Analytical Engine.")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "new\nline.txt").write_text(text)
        await rag.index_paths([tmp_path / folder])
    async with client(rag) as c:
        listed = await call(c, "list_documents")
        assert str(tmp_path) not in json.dumps(listed)
        assert [d["path"] for d in listed["documents"]] == ["new\\nline.txt"] * 2
        twice = await c.call_tool("delete_document", {"doc_id": "new\\nline.txt"})
        assert twice.is_error and "names 2 documents" in twice.content[0].text
        ids = [d["id"] for d in listed["documents"]]
        assert all(i in twice.content[0].text for i in ids)
        assert (await call(c, "delete_document", doc_id=ids[0]))["deleted"] == [ids[0]]
        deleted = await call(c, "delete_document", doc_id="new\\nline.txt")  # one left: no doubt
        assert deleted["deleted"] == [ids[1]]


def test_a_tool_error_names_no_address_or_server_path(tmp_path: Path) -> None:
    """Library errors reach the MCP client described, without host:port or server paths."""
    failures = (
        ModelServerError("openai:gpt@127.0.0.1:8123 kept answering HTTP 500"),
        StorageError(f"could not connect to host={tmp_path}/pg.sock user=kgrag"),
    )
    for failure in failures:
        with pytest.raises(ToolError) as raised, _reported():
            raise failure
        text = str(raised.value)
        assert "127.0.0.1" not in text and "8123" not in text and str(tmp_path) not in text, text
