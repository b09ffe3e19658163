"""``POST /login`` and ``GET /auth-status``, in LightRAG Server's shapes.

``/login`` takes ``username`` and ``password`` as a form (LightRAG's web
UI) or as JSON, and answers ``{access_token, token_type, auth_mode}``;
repeated failures for one user from one address get 429
(:mod:`kgrag.server.access.throttle`), counted in the default workspace's store so
that every server process on it counts them together.
Without accounts there is nothing to log in to: with auth off the answer
says ``auth_mode: disabled`` and carries no token; with API keys only it
is 401. ``/auth-status`` says whether accounts are configured and whether
auth is on, nothing more.
"""

from __future__ import annotations

from math import ceil
from typing import Any

from fastapi import APIRouter, HTTPException, Request

from kgrag.server.access.throttle import NAMESPACE, LoginThrottle, StoredLog
from kgrag.server.deps import authenticator, workspaces
from kgrag.server.views import JSONObject
from kgrag.server.workspaces.pool import DEFAULT

router = APIRouter(tags=["auth"])

BEARER = "bearer"


async def _credentials(request: Request) -> tuple[str, str]:
    """``(username, password)`` from a JSON body or a form; 422 when either is missing."""
    kind = request.headers.get("content-type", "")
    try:
        data: Any = await request.json() if kind.startswith("application/json") else None
        if data is None:
            data = dict(await request.form())
    except ValueError:
        data = None
    user = data.get("username") if isinstance(data, dict) else None
    password = data.get("password") if isinstance(data, dict) else None
    if not isinstance(user, str) or not isinstance(password, str) or not user:
        raise HTTPException(422, "username and password are required")
    return user, password


@router.post("/login")
async def login(request: Request) -> dict[str, str]:
    """An account token for a right user name and password."""
    auth = authenticator(request)
    user, password = await _credentials(request)
    if auth is None:
        return {"access_token": "", "token_type": BEARER, "auth_mode": "disabled"}
    throttle, address = _throttle(request), _address(request)
    log = await _failures(request, throttle)
    if wait := await throttle.wait_s(log, address, user):
        raise HTTPException(429, "too many failed logins", {"Retry-After": str(ceil(wait))})
    token = auth.login(user, password)
    if token is None:
        await throttle.failed(log, address, user)
        raise HTTPException(401, "wrong user name or password", {"WWW-Authenticate": "Bearer"})
    await throttle.succeeded(log, address, user)
    return {"access_token": token, "token_type": BEARER, "auth_mode": "enabled"}


def _throttle(request: Request) -> LoginThrottle:
    """The app's login throttle, made on the first login."""
    state = request.app.state
    if getattr(state, "login_throttle", None) is None:
        state.login_throttle = LoginThrottle()
    throttle: LoginThrottle = state.login_throttle
    return throttle


async def _failures(request: Request, throttle: LoginThrottle) -> StoredLog:
    """Where failed logins are counted: the default workspace's store."""
    rag = await workspaces(request).get(DEFAULT)
    return StoredLog(rag.storage.kv(NAMESPACE), throttle.window_s)


def _address(request: Request) -> str:
    return request.client.host if request.client else ""


@router.get("/auth-status")
async def auth_status(request: Request) -> JSONObject:
    """Whether auth is on and whether accounts can log in."""
    auth = authenticator(request)
    return {
        "auth_configured": bool(auth is not None and auth.accounts is not None),
        "auth_mode": "disabled" if auth is None else "enabled",
        "token_type": BEARER,
    }
