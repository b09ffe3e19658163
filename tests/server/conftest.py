"""A real kgrag server for the server tests: uvicorn on a free port, fake models.

``server`` starts one per test, serving a fresh workdir; parametrize it
indirectly with the auth to configure::

    @pytest.mark.parametrize("server", ["none", "key", "accounts"], indirect=True)
    def test_x(server: Served) -> None:
        httpx.get(f"{server.base_url}/health", headers=server.headers())

``start_server`` is the factory behind it (other settings, several servers
in one test). Credentials and helpers: ``served.py``. The browser tests get
``ui``, a page of headless Chromium on ``server`` (``webui_page.py``), from a
browser launched once per test file.

Every test here is swept (``body_sweep.py``): a response body holding the
absolute path of a test folder, or a model endpoint's address, fails it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from .body_sweep import BodySweep
from .served import Served, serving
from .webui_page import Ui, launched, opened

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


@pytest.fixture
def body_sweep(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> BodySweep:
    """Every response body this test reads (``forbid_address`` a model endpoint's address)."""
    base = tmp_path_factory.getbasetemp()
    sweep = BodySweep([str(base), str(base.resolve())])
    sweep.install(monkeypatch)
    return sweep


@pytest.fixture(autouse=True)
def _no_server_paths_or_upstreams(body_sweep: BodySweep) -> Iterator[None]:
    """Fail a test whose server answered with a test folder's path or a model's address."""
    yield
    leaks = body_sweep.leaks()
    if leaks:
        pytest.fail("a response leaked a server path or a model address:\n" + "\n".join(leaks))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, for the browser tests of one file."""
    with launched() as chromium:
        yield chromium


@pytest.fixture
def ui(browser: Any, server: Served) -> Iterator[Ui]:
    """A fresh page (empty storage) on ``server``'s web UI."""
    with opened(browser, server) as page:
        yield page
