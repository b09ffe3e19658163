"""The application: middleware, routers and the lifespan that opens and closes workspaces.

Every request passes, outermost first: security headers, CORS (only with
``cors_origins``), the ``/w/NAME`` prefix, the body limit, then the gate
(401/403, :mod:`kgrag.server.access.gate`) before any route sees it.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware

from kgrag.config.settings import Settings
from kgrag.server import lightrag_api
from kgrag.server.access import auth as auth_module
from kgrag.server.access.gate import Gate
from kgrag.server.access.security import BodyLimit, Limits, SecurityHeaders, cors_options
from kgrag.server.routes import auth, docs, health, mcp, ollama, openai, webui
from kgrag.server.workspaces.pool import Workspaces

_PREFIX = re.compile(r"^/w/([^/]+)(/.*)?$")


@dataclass(slots=True)
class ServerOptions:
    """What the server adds to :class:`Settings` for one process (the CLI fills it)."""

    settings: Settings
    auth: Any = None  # an object with .authenticate(credential) -> Principal | None; None: open
    create_workspaces: bool = True
    routers: list[Any] = field(default_factory=list)  # extra routers (tests, plugins)

    @classmethod
    def from_settings(cls, settings: Settings) -> ServerOptions:
        """Options from the server section (keys, accounts); ConfigError when they are unsound."""
        return cls(settings, auth_module.from_settings(settings), settings.server.create_workspaces)


def workspace_prefix(app: Any) -> Any:
    """ASGI middleware: ``/w/NAME/rest`` is served as ``/rest`` for workspace ``NAME``."""

    async def middleware(scope: dict[str, Any], receive: Any, send: Any) -> None:
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
        await lightrag_api.close(app)  # the writers first, then the readers
        await app.state.workspaces.close()

    app = FastAPI(title="kgrag", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.workspaces = Workspaces(options.settings, create=options.create_workspaces)
    app.state.auth = options.auth
    lightrag_api.install(app)  # LightRAG's routes and kgrag's beside them
    compatible = [ollama.router, openai.router]  # Ollama's and OpenAI's APIs; MCP is mounted
    pages = [docs.router, webui.router]  # the API documentation and the web UI
    for router in [health.router, auth.router, *pages, *compatible, *options.routers]:
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

    def __init__(self, app: Any) -> None:
        self.inner = workspace_prefix(app)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self.inner(scope, receive, send)
