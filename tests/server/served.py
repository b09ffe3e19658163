"""The server the tests run: uvicorn on a free loopback port, fake models, a fresh workdir.

Credentials: ``KEY_ALL`` / ``ADMIN`` open every workspace, ``KEY_ALPHA`` /
``ALICE`` only workspace ``alpha``. The fixtures are in ``conftest.py``.
"""

from __future__ import annotations

import functools
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from kgrag.config.settings import Settings
from kgrag.server.access.accounts import add_account
from kgrag.server.access.tokens import TokenSigner
from kgrag.server.app import ServerOptions, create_app
from tests.support.settings import fake_settings

AUTH_MODES = ("none", "key", "accounts")
KEY_ALL = "test-key-every-workspace-0123456789"
KEY_ALPHA = "test-key-workspace-alpha-0123456789"
JWT_SECRET = "tests-only secret: 9f1c2e7a4b8d0c3e6f5a1b2c7d9e0f4a5b6c7d8e9f0a1b2c"
ADMIN, ALICE = ("admin", "admin-password-1"), ("alice", "alice-password-1")


@dataclass
class Served:
    """A running server: where it is, what it serves, and credentials for it."""

    base_url: str
    workdir: Path
    auth: str  # none | key | accounts
    settings: Settings
    app: Any
    tokens: dict[str, str] = field(default_factory=dict)  # user -> valid token

    @property
    def credential(self) -> str | None:
        """A credential opening every workspace (None with auth off)."""
        if self.auth == "key":
            return KEY_ALL
        return self.tokens.get(ADMIN[0]) if self.auth == "accounts" else None

    @property
    def alpha_credential(self) -> str | None:
        """A credential for workspace ``alpha`` only."""
        if self.auth == "key":
            return KEY_ALPHA
        return self.tokens.get(ALICE[0]) if self.auth == "accounts" else None

    def headers(
        self, credential: str | None = None, workspace: str | None = None
    ) -> dict[str, str]:
        """Headers with ``credential`` (default: :attr:`credential`) and a workspace."""
        given = credential or self.credential
        out = {"Authorization": f"Bearer {given}"} if given else {}
        return out | ({"X-Workspace": workspace} if workspace else {})

    def client(self, **kwargs: Any) -> httpx.Client:
        """An httpx client for this server, sending :meth:`headers` (close it, or use ``with``)."""
        kwargs.setdefault("timeout", 30.0)
        return httpx.Client(base_url=self.base_url, headers=self.headers(), **kwargs)


def auth_settings(mode: str, workdir: Path) -> dict[str, Any]:
    """The settings that configure ``mode`` (accounts: writes the accounts file)."""
    if mode == "none":
        return {}
    if mode == "key":
        return {"api_keys": {KEY_ALL: ["*"], KEY_ALPHA: ["alpha"]}}
    if mode != "accounts":
        raise ValueError(f"unknown auth mode {mode!r}")
    accounts = workdir.parent / f"{workdir.name}-accounts.json"
    accounts.write_text(_accounts_json(), encoding="utf-8")
    return {"accounts_file": accounts, "jwt_secret": JWT_SECRET, "token_minutes": 5}


@functools.cache
def _accounts_json() -> str:
    """The test accounts file, hashed once per process (argon2 is slow on purpose)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "accounts.json"
        add_account(path, *ADMIN, ["*"])
        add_account(path, *ALICE, ["alpha"])
        return path.read_text(encoding="utf-8")


def make_settings(workdir: Path, mode: str = "none", **overrides: Any) -> Settings:
    workdir.mkdir(parents=True, exist_ok=True)
    return fake_settings(workdir, **(auth_settings(mode, workdir) | overrides))  # overrides win


@contextmanager
def running(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a thread on a free loopback port; yields the base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", server_header=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@contextmanager
def serving(workdir: Path, mode: str = "none", **overrides: Any) -> Iterator[Served]:
    """A :class:`Served` for a new server on ``workdir`` with auth ``mode``."""
    settings = make_settings(workdir, mode, **overrides)
    app = create_app(ServerOptions.from_settings(settings))
    tokens = {}
    if mode == "accounts":
        signer = TokenSigner(JWT_SECRET, settings.server.token_minutes)
        tokens = {ADMIN[0]: signer.issue(ADMIN[0]), ALICE[0]: signer.issue(ALICE[0])}
    with running(app) as url:
        yield Served(url, workdir, mode, settings, app, tokens)
