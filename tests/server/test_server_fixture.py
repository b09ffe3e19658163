"""The shared fixture serves over real HTTP, with each auth configuration."""

from __future__ import annotations

import httpx
import pytest

from .served import AUTH_MODES, Served


@pytest.mark.parametrize("server", AUTH_MODES, indirect=True)
def test_health_over_http(server: Served) -> None:
    reply = httpx.get(f"{server.base_url}/health")
    assert reply.status_code == 200
    assert reply.json() == {"status": "healthy"}
    assert server.workdir.is_dir()


@pytest.mark.parametrize("server", ["key", "accounts"], indirect=True)
def test_credentials_are_needed_and_work(server: Served) -> None:
    with httpx.Client(base_url=server.base_url) as anonymous:
        assert anonymous.get("/openapi.json").status_code == 200  # public
        assert anonymous.get("/w/alpha/nothing-here").status_code == 401
    with server.client() as client:
        assert client.get("/w/alpha/nothing-here").status_code == 404
