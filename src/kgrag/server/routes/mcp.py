"""``/mcp``: the MCP tools (:mod:`kgrag.server.compat.mcp_tools`) over streamable HTTP.

A request's workspace is named as for every route (``/w/NAME/mcp`` or the
``X-Workspace`` header; else the default one) and its credentials are
checked as for every route (401, 403); the tools' writes take their
turn in the workspace's job queue (:mod:`kgrag.server.jobs.queues`) like every
write. The transport is stateless: each request (a POST) stands alone, so
no session outlives the credentials that made it, and there is no stream
for the server to start (GET: 405).
:func:`mount` adds the route; :func:`running` (entered by the app's
lifespan) runs the SDK's session manager.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.responses import JSONResponse
from mcp.server.mcpserver import Context
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from kgrag.api.facade import KGRag
from kgrag.server import deps
from kgrag.server.access.auth import Authenticator
from kgrag.server.compat.mcp_tools import Index, Write, build_mcp
from kgrag.server.jobs.queues import Jobs, jobs_of, run_in_queue
from kgrag.server.views import JSONObject

PATH = "/mcp"
_INDEX = "kgrag_mcp_index"  # the scope key the guard leaves the request's index under
LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


@dataclass(frozen=True, slots=True)
class Queued:
    """A workspace read through its shared instance, written through its job queue."""

    rag: KGRag
    jobs: Jobs
    workspace: str

    async def write(self, title: str, act: Write) -> JSONObject:
        return await run_in_queue(self.jobs, self.workspace, f"mcp: {title}", act)


async def _scope_index(ctx: Context) -> Index:
    request: Any = ctx.request_context.request
    index: Index = request.scope[_INDEX]
    return index


def _security(auth: Authenticator | None) -> TransportSecuritySettings:
    """An open server (loopback only) checks Host and Origin against DNS rebinding."""
    if auth is not None:  # credentials are needed: a rebound page has none
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=LOOPBACK_HOSTS,
        allowed_origins=LOOPBACK_ORIGINS,
    )


class _Guard:
    """The caller and workspace checks, then the SDK's handler with the index in the scope."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self.manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            principal = deps.caller(request)
            workspace = await deps.workspace(request, principal)
        except HTTPException as exc:
            refused = JSONResponse({"detail": exc.detail}, exc.status_code, exc.headers)
            await refused(scope, receive, send)
            return
        index = Queued(workspace.rag, jobs_of(request), workspace.name)
        await self.manager.handle_request({**scope, _INDEX: index}, receive, send)


def mount(app: FastAPI) -> None:
    """Serve the MCP tools at ``/mcp`` of ``app`` (enter :func:`running` in its lifespan)."""
    server = build_mcp(_scope_index)
    server.streamable_http_app(stateless_http=True, transport_security=_security(app.state.auth))
    app.state.mcp = server
    guard = _Guard(server.session_manager)
    app.router.routes.append(Route(PATH, endpoint=guard, methods=["POST"]))


@asynccontextmanager
async def running(app: FastAPI) -> AsyncIterator[None]:
    """The SDK's session manager, running while the app serves."""
    async with app.state.mcp.session_manager.run():
        yield
