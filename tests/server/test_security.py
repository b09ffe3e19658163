"""Security headers on every response, strict CORS, body limits, and docs with nothing external."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser

import httpx
import pytest

from kgrag.server.routes.docs import STATIC

from .conftest import StartServer
from .served import Served

ORIGIN = "http://ui.example:3000"


def _assert_secured(reply: httpx.Response) -> None:
    csp = reply.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert reply.headers["referrer-policy"] == "no-referrer"
    assert reply.headers["x-frame-options"] == "DENY"
    assert "server" not in reply.headers


@pytest.mark.parametrize("server", ["key"], indirect=True)
def test_every_kind_of_response_carries_the_headers(server: Served) -> None:
    with httpx.Client(base_url=server.base_url) as client:
        replies = [
            client.get("/health"),  # 200, public
            client.get("/v1/models"),  # 401
            client.get("/w/beta/v1/models", headers={"X-API-Key": server.alpha_credential or ""}),
            client.get("/no-such-route", headers=server.headers()),  # 404
            client.post("/login", json={}),  # 422
            client.post("/login", content=b"x" * (9 * 1024 * 1024)),  # 413
            client.get("/docs"),
            client.get("/docs/static/swagger-ui.css"),
        ]
    assert [r.status_code for r in replies] == [200, 401, 403, 404, 422, 413, 200, 200]
    for reply in replies:
        _assert_secured(reply)
    assert replies[0].headers["cache-control"] == "no-store"
    assert "max-age" in replies[-1].headers["cache-control"]


def _preflight(client: httpx.Client, origin: str) -> httpx.Response:
    return client.options(
        "/query",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type, x-api-key",
        },
    )


@pytest.mark.parametrize("server", ["none"], indirect=True)
def test_without_cors_origins_no_origin_is_allowed(server: Served) -> None:
    with httpx.Client(base_url=server.base_url) as client:
        preflight = _preflight(client, ORIGIN)
        simple = client.get("/health", headers={"Origin": ORIGIN})
    assert preflight.status_code >= 400
    for reply in (preflight, simple):
        assert not any(name.startswith("access-control-") for name in reply.headers)


def test_cors_allows_only_the_configured_origins(start_server: StartServer) -> None:
    server = start_server("key", cors_origins=[ORIGIN])
    with httpx.Client(base_url=server.base_url) as client:
        allowed = _preflight(client, ORIGIN)
        other = _preflight(client, "http://evil.example")
        unauthorised = client.get("/v1/models", headers={"Origin": ORIGIN})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == ORIGIN
    assert "access-control-allow-credentials" not in allowed.headers
    assert other.status_code == 400 and "access-control-allow-origin" not in other.headers
    # a refused call still tells the allowed page why (the 401 is readable there)
    assert unauthorised.status_code == 401
    assert unauthorised.headers["access-control-allow-origin"] == ORIGIN


def _chunks(size: int) -> Iterator[bytes]:
    for _ in range(size // 1024):
        yield b"x" * 1024


def test_bodies_over_the_limits_get_413(start_server: StartServer) -> None:
    server = start_server(max_body_mb=0.01, max_upload_mb=0.05)  # 10 KiB, 50 KiB
    files = {"file": ("a.txt", b"y" * 30_000, "text/plain")}
    big_files = {"file": ("a.txt", b"y" * 60_000, "text/plain")}
    with httpx.Client(base_url=server.base_url) as client:
        assert client.post("/login", json={"username": "u", "password": "p"}).status_code == 200
        assert client.post("/login", content=b"x" * 20_000).status_code == 413
        json = {"content-type": "application/json"}  # so that /login reads the body
        assert client.post("/login", content=_chunks(20_480), headers=json).status_code == 413
        assert client.post("/login", content=_chunks(5_120), headers=json).status_code == 422
        assert client.post("/login", files=files).status_code == 422  # an upload: larger limit
        assert client.post("/login", files=big_files).status_code == 413


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.inline_scripts = 0
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.links += [v for k, v in attrs if k in ("src", "href", "data-spec") and v]
        self._in_script = tag == "script" and "src" not in values

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline_scripts += 1


@pytest.mark.parametrize("server", ["accounts"], indirect=True)
def test_the_docs_page_loads_only_this_server_s_files(server: Served) -> None:
    with httpx.Client(base_url=server.base_url) as client:
        page = client.get("/docs")
        parser = _Links()
        parser.feed(page.text)
        assert page.status_code == 200 and parser.inline_scripts == 0
        assert len(parser.links) == 4
        for link in parser.links:
            assert link.startswith("/") and not link.startswith("//"), link
            assert client.get(link).status_code == 200, link
        assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", page.text, re.IGNORECASE)
        assert client.get("/docs/static/LICENSE").status_code == 404  # only the listed assets
        assert client.get("/docs/static/..%2F..%2Fapp.py").status_code == 404
    init = (STATIC / "init.js").read_text()
    assert "validatorUrl: null" in init and "http" not in init
    assert "Apache License" in (STATIC / "LICENSE").read_text()


@pytest.mark.parametrize(
    ("server", "described"), [("key", True), ("none", False)], indirect=["server"]
)
def test_the_schema_names_the_credentials_when_auth_is_on(server: Served, described: bool) -> None:
    schema = httpx.get(f"{server.base_url}/openapi.json").json()
    assert ("security" in schema) is described
    if described:
        schemes = schema["components"]["securitySchemes"]
        assert schemes["APIKey"] == {"type": "apiKey", "in": "header", "name": "X-API-Key"}
        assert schemes["Bearer"]["scheme"] == "bearer"
