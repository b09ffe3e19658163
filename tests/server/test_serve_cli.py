"""``kgrag serve``: what it refuses (exit 2, one line), what it says, and a real run."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kgrag.cli.main import main
from kgrag.cli.serve_cmd import check_exposure, is_loopback
from kgrag.server.access.accounts import Accounts, add_account
from tests.support.settings import FAKE_ENV as FAKE

from .served import JWT_SECRET

KEY = "cli-test-key-0123456789abcdef"


@pytest.fixture
def kgrag(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> Iterator[object]:
    """``kgrag(*args, env=..., stdin=...) -> (status, stderr)``, in this process, clean env."""

    def run(*args: str, env: dict[str, str] | None = None, stdin: str = "") -> tuple[int, str]:
        with monkeypatch.context() as m:
            for name in [n for n in os.environ if n.startswith(("KGRAG_", "OPENAI_"))]:
                m.delenv(name)
            for name, value in (FAKE | (env or {})).items():
                m.setenv(name, value)
            m.chdir(tmp_path)
            m.setattr(sys, "stdin", io.StringIO(stdin))
            capsys.readouterr()
            try:
                code = main(list(args))
            except SystemExit as exc:
                code = int(exc.code or 0)
            return code, capsys.readouterr().err

    yield run


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.10.5", "::", "example.org"])
def test_an_open_server_refuses_a_non_loopback_address(kgrag, host: str) -> None:
    code, err = kgrag("serve", "--workdir", "w", "--host", host)
    assert code == 2
    assert err.strip().count("\n") == 0 and "without auth" in err and "KGRAG_API_KEY" in err


@pytest.mark.parametrize(
    ("secret", "reason"),
    [(None, "need jwt_secret"), ("changeme", "well-known default"), ("tiny-secret", "shorter")],
)
def test_accounts_with_an_unsound_secret_do_not_start(
    kgrag, tmp_path: Path, secret, reason
) -> None:
    code, err = kgrag(
        "serve", "--add-account", "bob", "--accounts-file", "acc.json", stdin="bob-password\n"
    )
    assert code == 0 and (tmp_path / "acc.json").exists()
    env = {"KGRAG_JWT_SECRET": secret} if secret else {}
    code, err = kgrag("serve", "--workdir", "w", "--accounts-file", "acc.json", env=env)
    assert code == 2 and reason in err and err.strip().count("\n") == 0


def test_add_account_writes_the_workspaces_and_needs_a_file(kgrag, tmp_path: Path) -> None:
    code, err = kgrag(
        "serve", "--add-account", "bob", "--workspaces", "a, b", stdin="pw-long-enough\n"
    )
    assert code == 2 and "--accounts-file" in err
    env = {"KGRAG_ACCOUNTS_FILE": str(tmp_path / "acc.json")}
    code, _ = kgrag(
        "serve", "--add-account", "bob", "--workspaces", "a, b", env=env, stdin="pw-long-enough\n"
    )
    assert code == 0
    accounts = Accounts.load(tmp_path / "acc.json")
    assert accounts.check_password("bob", "pw-long-enough") == frozenset({"a", "b"})
    code, err = kgrag("serve", "--add-account", "eve", env=env, stdin="short\n")
    assert code == 2 and "at least 8" in err


def test_bad_server_settings_are_one_line_errors(kgrag) -> None:
    code, err = kgrag("serve", "--workdir", "w", env={"KGRAG_API_KEYS": "{not json"})
    assert code == 2 and "api_keys" in err and "not json" not in err  # the value is a secret
    code, err = kgrag("serve", "--workdir", "w", "--port", "70000")
    assert code == 2 and "port=70000" in err


def _start(tmp_path: Path, env: dict[str, str], *args: str) -> tuple[subprocess.Popen[str], str]:
    """``kgrag serve`` in a subprocess on a free port; the process and its base URL."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("KGRAG_", "OPENAI_"))}
    process = subprocess.Popen(
        [sys.executable, "-m", "kgrag.cli.main", "serve", "--workdir", "w", "--port", "0", *args],
        cwd=tmp_path,
        env=clean | FAKE | env,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    lines = []
    for line in process.stderr:
        lines.append(line)
        if found := re.search(r"running on (http://127\.0\.0\.1:\d+)", line):
            return process, found.group(1)
    process.wait()
    raise AssertionError("kgrag serve did not start:\n" + "".join(lines))


def _stop(process: subprocess.Popen[str]) -> int:
    process.send_signal(signal.SIGINT)
    return process.wait(timeout=30)


def test_an_open_server_on_loopback_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    for host in ("127.0.0.1", "localhost", "::1", "127.8.9.10"):
        assert is_loopback(host)
        check_exposure(host, auth_on=False)
        assert "listening on loopback only" in capsys.readouterr().err
    check_exposure("0.0.0.0", auth_on=True)  # auth on: any address, nothing to say
    assert capsys.readouterr().err == ""


def test_kgrag_serve_with_a_key_and_accounts_gates_the_routes(tmp_path: Path) -> None:
    accounts = tmp_path / "acc.json"
    add_account(accounts, "bob", "bob-password", ["alpha"])  # the CLI way is tested above
    env = {"KGRAG_API_KEY": KEY, "KGRAG_JWT_SECRET": JWT_SECRET}
    process, url = _start(tmp_path, env, "--accounts-file", str(accounts))
    try:
        assert httpx.get(f"{url}/v1/models").status_code == 401
        assert httpx.get(f"{url}/v1/models", headers={"X-API-Key": KEY}).status_code == 200
        login = httpx.post(f"{url}/login", data={"username": "bob", "password": "bob-password"})
        bearer = {"Authorization": f"Bearer {login.json()['access_token']}"}
        assert httpx.get(f"{url}/w/alpha/v1/models", headers=bearer).status_code == 200
        assert httpx.get(f"{url}/v1/models", headers=bearer).status_code == 403
    finally:
        assert _stop(process) == 0
