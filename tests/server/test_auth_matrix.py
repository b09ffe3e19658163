"""Every route × auth configuration × credential × workspace -> the status the gate owes.

Routes are enumerated from ``app.routes``, so a route added later is
covered without editing this file. Valid credentials on their own
workspace must get past the gate (any status but 401/403, since bodies
differ per route); bad credentials get 401, another's workspace 403. Only
:data:`kgrag.server.access.gate.PUBLIC` is served to anyone.
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
import pytest
from starlette.routing import Mount

from kgrag.server.access import gate
from kgrag.server.access.tokens import TokenSigner
from kgrag.server.app import ServerOptions, create_app

from .asgi_calls import status_of
from .served import AUTH_MODES, JWT_SECRET, KEY_ALL, KEY_ALPHA, make_settings

GATED = (401, 403)
OTHER_SECRET = "another server's secret: 5d1e8c0b7a6f4e3d2c1b0a99887766"


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def bad_credentials() -> dict[str, str | None]:
    """Credentials no configuration accepts, by name."""
    claims = {"sub": "alice", "exp": int(time.time()) + 600}
    return {
        "none": None,
        "wrong key": "wrong-key-that-was-never-configured-0000",
        "expired token": TokenSigner(JWT_SECRET, 5).issue("alice", now=time.time() - 3600),
        "alg-none token": f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64(claims)}.",
        "other key's token": TokenSigner(OTHER_SECRET, 5).issue("alice"),
        "HS384 token": jwt.encode(claims, JWT_SECRET, algorithm="HS384"),
        "unknown user's token": TokenSigner(JWT_SECRET, 5).issue("mallory"),
    }


def flat_routes(routes: list[Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(full path, route)`` for every route, included routers opened (FastAPI includes lazily)."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            context = getattr(route, "include_context", None)
            yield from flat_routes(inner.routes, prefix + getattr(context, "prefix", ""))
        else:
            yield prefix + route.path, route


def endpoints(app: Any) -> list[tuple[str, str]]:
    """``(method, path)`` for every HTTP route and mount, path parameters filled in."""
    out = set()
    for path, route in flat_routes(app.routes):
        if isinstance(route, Mount):
            out |= {("GET", f"{path}/"), ("POST", f"{path}/")}
            continue
        for method in getattr(route, "methods", None) or ():
            if method not in ("HEAD", "OPTIONS"):
                out.add((method, re.sub(r"\{[^}]+\}", "matrix-x", path)))
    return sorted(out)


def test_enumeration_finds_every_documented_operation(tmp_path: Path) -> None:
    app = create_app(ServerOptions.from_settings(make_settings(tmp_path / "w")))
    found = set(endpoints(app))
    for path, operations in app.openapi()["paths"].items():
        for method in operations:
            filled = re.sub(r"\{[^}]+\}", "matrix-x", path)
            assert (method.upper(), filled) in found, f"{method} {path} not enumerated"
    assert {("GET", "/docs"), ("GET", "/docs/static/matrix-x")} <= found


PUBLIC_PATHS = {"/health", "/login", "/auth-status", "/docs", "/openapi.json", "/", "/webui"}


def is_public(path: str) -> bool:
    """Served to anyone: the entry points (this list, not the gate's, is the expectation)."""
    return path in PUBLIC_PATHS or path.startswith(("/docs/static/", "/webui/"))


@dataclass
class Configured:
    """One auth configuration's app and its valid credentials."""

    mode: str
    app: Any
    alpha: str | None  # opens workspace alpha only
    every: str | None  # opens every workspace


@pytest.fixture(params=AUTH_MODES)
def configured(request: pytest.FixtureRequest, tmp_path: Path) -> Configured:
    """The app for one auth configuration (the test runs its lifespan, in its own task)."""
    mode = request.param
    app = create_app(ServerOptions.from_settings(make_settings(tmp_path / "w", mode)))
    return Configured(mode, app, *_valid(mode))


def _valid(mode: str) -> tuple[str | None, str | None]:
    if mode == "key":
        return KEY_ALPHA, KEY_ALL
    if mode == "accounts":
        signer = TokenSigner(JWT_SECRET, 5)
        return signer.issue("alice"), signer.issue("admin")
    return None, None


def _headers(credential: str | None, workspace_header: str | None = None) -> dict[str, str]:
    out = {"Authorization": f"Bearer {credential}"} if credential else {}
    return out | ({"LIGHTRAG-WORKSPACE": workspace_header} if workspace_header else {})


def cases(configured: Configured, path: str) -> Iterator[tuple[str, str, dict[str, str], bool]]:
    """``(case, path, headers, gated)``: whether the gate must refuse (401/403)."""
    auth_on = configured.mode != "none"
    guarded = auth_on and not is_public(path)
    for name, credential in bad_credentials().items():
        yield f"{name}", path, _headers(credential), guarded
    alpha, every = configured.alpha, configured.every
    yield "valid, own workspace by prefix", f"/w/alpha{path}", _headers(alpha), False
    yield "valid, own workspace by header", path, _headers(alpha, "alpha"), False
    yield "valid, every workspace, default", path, _headers(every), False
    yield "valid, other workspace by prefix", f"/w/beta{path}", _headers(alpha), guarded
    yield "valid, other workspace by header", path, _headers(alpha, "beta"), guarded
    yield "valid, default is another's", path, _headers(alpha), guarded


def expected(case: str, gated: bool) -> set[int] | None:
    """The statuses allowed: 401 for bad credentials, 403 for another's workspace."""
    if not gated:
        return None  # anything but 401/403
    return {403} if case.startswith("valid") else {401}


async def test_every_route_is_gated(configured: Configured) -> None:
    routes = endpoints(configured.app)
    assert ("GET", "/health") in routes and len(routes) >= 5
    async with configured.app.router.lifespan_context(configured.app):
        wrong = [
            line for method, path in routes for line in await _misgated(configured, method, path)
        ]
    assert not wrong, "\n".join(wrong)


async def _misgated(configured: Configured, method: str, path: str) -> list[str]:
    """The cases of one endpoint whose status is not what the gate owes."""
    wrong = []
    for case, url, headers, gated in cases(configured, path):
        status = await status_of(configured.app, method, url, headers)
        allowed = expected(case, gated)
        if not ((status in allowed) if allowed else (status not in GATED)):
            wrong.append(f"{method} {url} [{case}] -> {status}")
    return wrong


def test_public_paths_are_exactly_the_entry_points() -> None:
    """Growing the public set is a decision: this test names every member."""
    assert gate.PUBLIC == PUBLIC_PATHS
    assert gate.PUBLIC_PREFIXES == ("/docs/static/", "/webui/")


def test_the_matrix_sees_routes_added_later(tmp_path: Path) -> None:
    from fastapi import APIRouter

    extra = APIRouter()

    @extra.post("/added/{thing}")
    async def added(thing: str) -> dict[str, str]:
        return {"thing": thing}

    settings = make_settings(tmp_path / "w", "key")
    app = create_app(
        ServerOptions(settings, ServerOptions.from_settings(settings).auth, routers=[extra])
    )
    assert ("POST", "/added/matrix-x") in endpoints(app)
