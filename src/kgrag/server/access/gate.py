"""The gate in front of every route: who is calling (401) and may they use the workspace (403).

It runs as middleware, so a route added later is covered without doing
anything. With auth on, only :data:`PUBLIC` paths are served to anonymous
callers: ``/health`` (says nothing but "healthy"), the login entry points,
the API documentation (its page, vendored assets and schema) and the web
UI's static files (``/`` redirects to them; their API calls need credentials). Every
other request needs a valid API key or account token, and a workspace
(named by path prefix or header, else the default one) its principal may
use. The principal is left in ``scope["kgrag_principal"]`` for the routes.
"""

from __future__ import annotations

from fastapi import HTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from kgrag.server.access.auth import Authenticator, Principal, credentials
from kgrag.server.access.security import reply
from kgrag.server.deps import workspace_name

PUBLIC = frozenset({"/health", "/login", "/auth-status", "/docs", "/openapi.json", "/", "/webui"})
PUBLIC_PREFIXES = ("/docs/static/", "/webui/")
CHALLENGE = ((b"www-authenticate", b"Bearer"),)


def is_public(path: str) -> bool:
    return path in PUBLIC or path.startswith(PUBLIC_PREFIXES)


def principal_of(auth: Authenticator, scope: Scope) -> Principal | None:
    """The caller the request's credentials name, or None."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    given = credentials(headers)
    return auth.authenticate(given) if given else None


class Gate:
    """401 without valid credentials, 403 for a workspace the caller may not use."""

    def __init__(self, app: ASGIApp, auth: Authenticator | None) -> None:
        self.app, self.auth = app, auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.auth is None or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        principal = principal_of(self.auth, scope)
        if principal is not None:
            scope = dict(scope, kgrag_principal=principal)
        refusal = None if is_public(scope["path"]) else _refusal(principal, scope)
        if refusal is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        else:
            status, detail = refusal
            await reply(send, status, detail, CHALLENGE if status == 401 else ())


def _refusal(principal: Principal | None, scope: Scope) -> tuple[int, str] | None:
    if principal is None:
        return 401, "missing or invalid credentials"
    try:
        name = workspace_name(Request(scope))
    except HTTPException as exc:
        return exc.status_code, str(exc.detail)
    if not principal.may_use(name):
        return 403, f"not allowed to use workspace {name!r}"
    return None
