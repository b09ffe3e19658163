"""The application: middleware, routers and the lifespan that opens and closes workspaces.

Every router is mounted here, from :data:`ROUTERS` (the order is the order
in which paths are matched), then the MCP endpoint (``/mcp``, a plain ASGI
route). Every request passes, outermost first: security headers, CORS (only
with ``cors_origins``), the ``/w/NAME`` prefix, the body limit, then the
gate (401/403, :mod:`kgrag.server.access.gate`) before any route sees it.
kgrag's errors become HTTP answers in one handler
(:mod:`kgrag.server.routes.errors`).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from fastapi import APIRouter, FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from kgrag.config.settings import Settings
from kgrag.server.access import auth as auth_module
from kgrag.server.access.auth import Authenticator
from kgrag.server.access.gate import Gate
from kgrag.server.access.security import BodyLimit, Limits, SecurityHeaders, cors_options
from kgrag.server.jobs.queues import Jobs
from kgrag.server.routes import (
    auth,
    doc_admin,
    doc_status,
    docs,
    documents,
    errors,
    graph,
    graph_curate,
    graph_edit,
    health,
    mcp,
    ollama,
    openai,
    query,
    webui,
)
from kgrag.server.routes import jobs as job_routes
from kgrag.server.workspaces.pool import Workspaces

_PREFIX = re.compile(r"^/w/([^/]+)(/.*)?$")

ROUTERS: tuple[APIRouter, ...] = (
    documents.router,  # LightRAG's routes (documents, query, graph) and kgrag's beside them
    doc_status.router,
    doc_admin.router,
    job_routes.router,
    query.router,
    graph.router,
    graph_edit.router,
    graph_curate.router,
    health.router,
    auth.router,
    docs.router,  # the API documentation and the web UI
    webui.router,
    ollama.router,  # Ollama's and OpenAI's APIs (MCP is mounted after them)
    openai.router,
)


@dataclass(slots=True)
class ServerOptions:
    """What the server adds to :class:`Settings` for one process (the CLI fills it)."""

    settings: Settings
    auth: Authenticator | None = None  # None: open
    create_workspaces: bool = True
    routers: list[APIRouter] = field(default_factory=list)  # extra routers (tests, plugins)

    @classmethod
    def from_settings(cls, settings: Settings) -> ServerOptions:
        """Options from the server section (keys, accounts); ConfigError when they are unsound."""
        return cls(settings, auth_module.from_settings(settings), settings.server.create_workspaces)


def workspace_prefix(app: ASGIApp) -> ASGIApp:
    """ASGI middleware: ``/w/NAME/rest`` is served as ``/rest`` for workspace ``NAME``."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            match = _PREFIX.match(scope.get("path", ""))
            if match:
                scope = dict(scope, path=match.group(2) or "/", kgrag_workspace=match.group(1))
                scope["raw_path"] = scope["path"].encode()
        await app(scope, receive, send)

    return middleware


def create_app(options: ServerOptions) -> FastAPI:
    """A FastAPI app serving ``options.settings.store.workdir`` and its workspaces."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with mcp.running(app):
            yield
        await jobs.close()  # the queues and their writers first, then the readers
        await workspaces.close()

    app = FastAPI(title="kgrag", lifespan=lifespan, docs_url=None, redoc_url=None)
    workspaces = Workspaces(options.settings, create=options.create_workspaces)
    jobs = Jobs(workspaces)
    app.state.workspaces, app.state.jobs, app.state.auth = workspaces, jobs, options.auth
    errors.install(app)
    for router in (*ROUTERS, *options.routers):
        app.include_router(router)
    mcp.mount(app)
    docs.describe_auth(app)
    _add_middleware(app, options)
    return app


def _add_middleware(app: FastAPI, options: ServerOptions) -> None:
    """The stack described above; each ``add_middleware`` wraps the ones before it."""
    settings = options.settings
    app.add_middleware(Gate, auth=options.auth)
    app.add_middleware(
        BodyLimit,
        limits=Limits.from_mib(settings.server.max_body_mb, settings.server.max_upload_mb),
    )
    app.add_middleware(_Prefix)
    if (cors := cors_options(settings.server.cors_origins)) is not None:
        app.add_middleware(CORSMiddleware, **cors)
    app.add_middleware(SecurityHeaders)


class _Prefix:
    """:func:`workspace_prefix` as a Starlette middleware class."""

    def __init__(self, app: ASGIApp) -> None:
        self.inner = workspace_prefix(app)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.inner(scope, receive, send)
