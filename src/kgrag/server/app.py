"""The application: middleware, routers and the lifespan that opens and closes workspaces."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI

from kgrag.config import Settings
from kgrag.server.routes import health
from kgrag.server.workspaces import Workspaces

_PREFIX = re.compile(r"^/w/([^/]+)(/.*)?$")


@dataclass(slots=True)
class ServerOptions:
    """What the server adds to :class:`Settings` for one process (the CLI fills it)."""

    settings: Settings
    auth: Any = None  # an object with .authenticate(credential) -> Principal | None; None: open
    create_workspaces: bool = True
    routers: list[Any] = field(default_factory=list)  # extra routers (tests, plugins)


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
    """A FastAPI app serving ``options.settings.workdir`` and its workspaces."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await app.state.workspaces.close()

    app = FastAPI(title="kgrag", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.workspaces = Workspaces(options.settings, create=options.create_workspaces)
    app.state.auth = options.auth
    for router in [health.router, *options.routers]:
        app.include_router(router)
    app.add_middleware(_Prefix)
    return app


class _Prefix:
    """:func:`workspace_prefix` as a Starlette middleware class."""

    def __init__(self, app: Any) -> None:
        self.inner = workspace_prefix(app)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self.inner(scope, receive, send)
