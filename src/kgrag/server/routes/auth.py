"""``POST /login`` and ``GET /auth-status``, in LightRAG Server's shapes.

``/login`` takes ``username`` and ``password`` as a form (LightRAG's web
UI) or as JSON, and answers ``{access_token, token_type, auth_mode}``.
Without accounts there is nothing to log in to: with auth off the answer
says ``auth_mode: disabled`` and carries no token; with API keys only it
is 401. ``/auth-status`` says whether accounts are configured and whether
auth is on, nothing more.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request

router = APIRouter(tags=["auth"])

BEARER = "bearer"


def _auth(request: Request) -> Any:
    return request.app.state.auth


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
    auth = _auth(request)
    user, password = await _credentials(request)
    if auth is None:
        return {"access_token": "", "token_type": BEARER, "auth_mode": "disabled"}
    token = auth.login(user, password)
    if token is None:
        raise HTTPException(401, "wrong user name or password", {"WWW-Authenticate": "Bearer"})
    return {"access_token": token, "token_type": BEARER, "auth_mode": "enabled"}


@router.get("/auth-status")
async def auth_status(request: Request) -> dict[str, Any]:
    """Whether auth is on and whether accounts can log in."""
    auth = _auth(request)
    return {
        "auth_configured": bool(auth is not None and auth.accounts is not None),
        "auth_mode": "disabled" if auth is None else "enabled",
        "token_type": BEARER,
    }
