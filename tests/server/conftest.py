"""A real kgrag server for the server tests: uvicorn on a free port, fake models.

``server`` starts one per test, serving a fresh workdir; parametrize it
indirectly with the auth to configure::

    @pytest.mark.parametrize("server", ["none", "key", "accounts"], indirect=True)
    def test_x(server: Served) -> None:
        httpx.get(f"{server.base_url}/health", headers=server.headers())

``start_server`` is the factory behind it (other settings, several servers
in one test). Credentials and helpers: ``served.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from .served import Served, serving

StartServer = Callable[..., Served]


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[StartServer]:
    """``start_server(mode="none", workdir=None, **settings) -> Served``; stopped after the test."""
    with ExitStack() as stack:
        count = iter(range(1000))

        def start(mode: str = "none", workdir: Path | None = None, **overrides: Any) -> Served:
            folder = workdir or tmp_path / f"served-{next(count)}"
            return stack.enter_context(serving(folder, mode, **overrides))

        yield start


@pytest.fixture
def server(request: pytest.FixtureRequest, start_server: StartServer) -> Served:
    """A running server; parametrize indirectly with an auth mode (default ``none``)."""
    return start_server(getattr(request, "param", "none"))
