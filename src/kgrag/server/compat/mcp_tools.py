"""The MCP tools over one index (``kgrag mcp`` on stdio, ``/mcp`` in the server).

Tools: ``query`` (an answer with its references), ``query_data`` (the
structured retrieval, no answer), ``insert_text``, ``list_documents``,
``delete_document`` and ``get_entity`` (an entity, its relations and its
neighbours). Which index a call works on is the transport's business: a
:data:`IndexSource` gives it for the call's context, as an :class:`Index`
that reads through ``rag`` and writes through ``write`` (in the server,
the workspace's job queue, behind its other writes). Failures of the
library reach the client as tool errors with their message.

Documents are listed by id and name (:func:`kgrag.ingest.names.document_name`:
escaped, relative to the folder indexed); a file's absolute path is never
listed. ``delete_document`` takes any of them back: an id, a listed name
or path, or a source; a name several documents answer to is an error
that lists their ids.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from kgrag.api.facade import KGRag
from kgrag.errors import KGRagError
from kgrag.ingest.names import display_name
from kgrag.server.routes.errors import client_message
from kgrag.server.views import JSONObject
from kgrag.server.views.entity import entity_view

Write = Callable[[KGRag], Awaitable[JSONObject]]


class Index(Protocol):
    """One index as the tools use it: ``rag`` to read, :meth:`write` to change it."""

    @property
    def rag(self) -> KGRag: ...

    async def write(self, title: str, act: Write) -> JSONObject:
        """Run ``act`` on the writing instance; its result."""
        ...


@dataclass(frozen=True, slots=True)
class Direct:
    """An index read and written through the one instance (``kgrag mcp``)."""

    rag: KGRag

    async def write(self, title: str, act: Write) -> JSONObject:
        return await act(self.rag)


IndexSource = Callable[[Context], Awaitable[Index]]
# The query modes (kgrag.server.compat.chat.names.MODES, which a test keeps equal).
Mode = Literal["mix", "local", "global", "hybrid", "naive", "ppr", "path", "auto", "bypass"]
MAX_LIST = 500  # documents per list_documents call

INSTRUCTIONS = (
    "A knowledge-graph index of documents. Use `query` for an answer citing its sources "
    "as [n] (see `references`), `query_data` for the retrieved entities, relations and "
    "chunks, `get_entity` to explore the graph around a name."
)
_READ = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
_WRITE = ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False)
_DELETE = ToolAnnotations(readOnlyHint=False, destructiveHint=True, openWorldHint=False)


@contextmanager
def _reported() -> Iterator[None]:
    """Let the library's failures reach the client, without addresses or server paths."""
    try:
        yield
    except KGRagError as exc:
        raise ToolError(client_message(exc)) from exc


def _query_overrides(mode: str, top_k: int | None, **more: Any) -> dict[str, Any]:
    return {"mode": mode, **more, **({"top_k": top_k} if top_k else {})}


class Tools:
    """The tools, each asking :attr:`source` for the index of the call."""

    async def _rag(self, ctx: Context) -> KGRag:
        return (await self.source(ctx)).rag

    def __init__(self, source: IndexSource) -> None:
        self.source = source

    async def query(
        self,
        question: str,
        ctx: Context,
        mode: Mode = "mix",
        top_k: int | None = None,
        context_only: bool = False,
    ) -> JSONObject:
        """Answer a question from the index; the answer cites [n], listed in `references`.

        `context_only` returns the retrieved context instead of an answer.
        """
        over = _query_overrides(
            mode, top_k, only_need_context=context_only, include_references=True
        )
        with _reported():
            result = await (await self._rag(ctx)).query(question, **over)
        return {result.kind: result.text, "mode": result.mode, "references": result.references}

    async def query_data(
        self, question: str, ctx: Context, mode: Mode = "mix", top_k: int | None = None
    ) -> JSONObject:
        """What retrieval finds for a question (entities, relations, chunks, references); no answer."""
        with _reported():
            return dict(  # the tool's JSON: QueryData as it is
                await (await self._rag(ctx)).query_data(question, **_query_overrides(mode, top_k))
            )

    async def insert_text(
        self, text: str, ctx: Context, file_path: str | None = None, doc_id: str | None = None
    ) -> JSONObject:
        """Index a text as one document (`doc_id`: its identity; a later text under it replaces it)."""

        async def act(rag: KGRag) -> JSONObject:
            report = await rag.insert(text, file_paths=file_path, ids=doc_id)
            return {
                "ok": report.ok,
                "new": report.new,
                "updated": report.updated,
                "unchanged": report.unchanged,
                "duplicates": report.duplicates,
                "failed": [{"id": d, "file": f, "error": e} for d, f, e in report.failed],
            }

        with _reported():
            title = f"insert {display_name(doc_id) if doc_id else 'a text'}"
            return await (await self.source(ctx)).write(title, act)

    async def list_documents(self, ctx: Context, offset: int = 0, limit: int = 50) -> JSONObject:
        """A page of the indexed documents: id, name, path, status, chunks, metadata."""
        with _reported():
            rag = await self._rag(ctx)
            page = await rag.documents(max(offset, 0), min(max(limit, 1), MAX_LIST))
        for doc in page["documents"]:
            if os.path.isabs(doc["path"]):
                doc["path"] = doc["name"]  # a file: its name, not where it lies on this machine
        return dict(page)

    async def delete_document(self, doc_id: str, ctx: Context) -> JSONObject:
        """Remove a document and what only it supported.

        `doc_id`: its id, or its name or path as `list_documents` lists it.
        """

        async def act(rag: KGRag) -> JSONObject:
            ids, stats = await rag.delete([doc_id])
            return {
                "deleted": ids,
                "chunks_removed": stats.chunks_removed,
                "entities_deleted": stats.nodes_deleted,
                "relations_deleted": stats.edges_deleted,
            }

        with _reported():
            return await (await self.source(ctx)).write(f"delete {display_name(doc_id)}", act)

    async def get_entity(self, name: str, ctx: Context, max_relations: int = 20) -> JSONObject:
        """An entity of the graph, its strongest relations and the entities they lead to."""
        with _reported():
            rag = await self._rag(ctx)
            return await entity_view(rag.storage.graph, name, max(1, min(max_relations, 200)))


def build_mcp(source: IndexSource) -> MCPServer:
    """An MCP server offering the tools over the indexes ``source`` gives."""
    server: MCPServer = MCPServer("kgrag", instructions=INSTRUCTIONS, log_level="WARNING")
    tools = Tools(source)
    server.add_tool(tools.query, annotations=_READ)
    server.add_tool(tools.query_data, annotations=_READ)
    server.add_tool(tools.insert_text, annotations=_WRITE)
    server.add_tool(tools.list_documents, annotations=_READ)
    server.add_tool(tools.delete_document, annotations=_DELETE)
    server.add_tool(tools.get_entity, annotations=_READ)
    return server
