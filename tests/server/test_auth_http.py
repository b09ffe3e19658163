"""Keys, accounts and tokens over real HTTP: login shapes, workspaces, expiry, refusals."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from kgrag.errors import ConfigError
from kgrag.server.access.accounts import Accounts, add_account
from kgrag.server.access.throttle import LoginThrottle, MemoryLog
from kgrag.server.access.tokens import TokenSigner, check_secret

from .conftest import StartServer
from .served import ADMIN, ALICE, JWT_SECRET, KEY_ALPHA, Served

# a gated route of this package that needs no body: the OpenAI-compatible model list
GATED = "/v1/models"


@pytest.mark.parametrize("server", ["accounts"], indirect=True)
def test_login_with_a_form_and_json_gives_a_working_token(server: Served) -> None:
    with httpx.Client(base_url=server.base_url) as client:
        form = client.post("/login", data={"username": ALICE[0], "password": ALICE[1]})
        assert form.status_code == 200
        body = form.json()
        assert set(body) == {"access_token", "token_type", "auth_mode"}
        assert body["token_type"] == "bearer" and body["auth_mode"] == "enabled"
        given = client.post("/login", json={"username": ALICE[0], "password": ALICE[1]})
        assert given.status_code == 200
        bearer = {"Authorization": f"Bearer {body['access_token']}"}
        assert client.get(f"/w/alpha{GATED}", headers=bearer).status_code == 200
        assert client.get(f"/w/beta{GATED}", headers=bearer).status_code == 403
        assert client.get(GATED, headers=bearer).status_code == 403  # default is not alice's
        assert client.get(GATED).status_code == 401


@pytest.mark.parametrize("server", ["accounts"], indirect=True)
def test_wrong_passwords_and_unknown_users_get_the_same_401(server: Served) -> None:
    with httpx.Client(base_url=server.base_url) as client:
        wrong = client.post("/login", data={"username": ALICE[0], "password": "nope-nope"})
        nobody = client.post("/login", data={"username": "nobody", "password": ALICE[1]})
        assert wrong.status_code == nobody.status_code == 401
        assert wrong.json() == nobody.json()
        assert client.post("/login", json={"username": ALICE[0]}).status_code == 422
        assert (
            client.post(
                "/login", content=b"{not json", headers={"content-type": "application/json"}
            ).status_code
            == 422
        )


@pytest.mark.parametrize("server", ["accounts"], indirect=True)
def test_expired_and_forged_tokens_are_refused(server: Served) -> None:
    expired = TokenSigner(JWT_SECRET, 1).issue(ADMIN[0], now=time.time() - 120)
    forged = TokenSigner("x" * 16 + "another secret, 32 bytes+", 5).issue(ADMIN[0])
    with httpx.Client(base_url=server.base_url) as client:
        for token in (expired, forged, server.tokens[ADMIN[0]] + "x"):
            reply = client.get(GATED, headers={"Authorization": f"Bearer {token}"})
            assert reply.status_code == 401
            assert reply.headers["www-authenticate"] == "Bearer"
        assert client.get(GATED, headers=server.headers()).status_code == 200


def test_a_removed_account_s_token_stops_working(start_server: StartServer, tmp_path: Path) -> None:
    server = start_server("accounts")
    accounts = server.settings.server.accounts_file
    assert accounts is not None
    data = json.loads(accounts.read_text())
    del data[ALICE[0]]
    accounts.write_text(json.dumps(data))
    restarted = start_server(workdir=server.workdir, accounts_file=accounts, jwt_secret=JWT_SECRET)
    token = {"Authorization": f"Bearer {server.tokens[ALICE[0]]}"}
    assert httpx.get(f"{restarted.base_url}/w/alpha{GATED}", headers=token).status_code == 401
    assert httpx.get(f"{server.base_url}/w/alpha{GATED}", headers=token).status_code == 200


@pytest.mark.parametrize("server", ["key"], indirect=True)
def test_keys_by_either_header_and_bound_to_their_workspaces(server: Served) -> None:
    with httpx.Client(base_url=server.base_url) as client:
        assert client.get(f"/w/alpha{GATED}", headers={"X-API-Key": KEY_ALPHA}).status_code == 200
        assert (
            client.get(GATED, headers={"X-API-Key": KEY_ALPHA, "X-Workspace": "alpha"}).status_code
            == 200
        )
        assert client.get(f"/w/beta{GATED}", headers={"X-API-Key": KEY_ALPHA}).status_code == 403
        assert client.get(GATED, headers={"X-API-Key": KEY_ALPHA[:-1]}).status_code == 401
        assert client.get(GATED, headers={"Authorization": f"Basic {KEY_ALPHA}"}).status_code == 401
        # keys only: there is no account to log in to
        assert client.post("/login", data={"username": "a", "password": "b"}).status_code == 401


@pytest.mark.parametrize(
    ("server", "configured", "mode"),
    [("none", False, "disabled"), ("key", False, "enabled"), ("accounts", True, "enabled")],
    indirect=["server"],
)
def test_auth_status_says_the_mode_and_nothing_else(
    server: Served, configured: bool, mode: str
) -> None:
    reply = httpx.get(f"{server.base_url}/auth-status")
    assert reply.status_code == 200
    assert reply.json() == {
        "auth_configured": configured,
        "auth_mode": mode,
        "token_type": "bearer",
    }


@pytest.mark.parametrize("server", ["none"], indirect=True)
def test_login_with_auth_off_says_disabled_and_gives_no_token(server: Served) -> None:
    reply = httpx.post(f"{server.base_url}/login", data={"username": "a", "password": "b"})
    assert reply.json() == {"access_token": "", "token_type": "bearer", "auth_mode": "disabled"}


@pytest.mark.parametrize("server", ["none", "key", "accounts"], indirect=True)
def test_health_reveals_nothing(server: Served) -> None:
    for headers in ({}, server.headers()):
        reply = httpx.get(f"{server.base_url}/health", headers=headers)
        assert reply.json() == {"status": "healthy"}
        assert "server" not in reply.headers
        assert str(server.workdir) not in reply.text


def test_accounts_file_problems_are_one_line_config_errors(tmp_path: Path) -> None:
    path = tmp_path / "accounts.json"
    with pytest.raises(ConfigError, match="cannot read accounts file"):
        Accounts.load(path)
    path.write_text('{"bob": {"workspaces": ["a"]}}')
    with pytest.raises(ConfigError, match="password_hash"):
        Accounts.load(path)
    path.write_text('{"bob": {"password_hash": "$argon2id$x", "workspaces": []}}')
    with pytest.raises(ConfigError, match="needs a list of workspaces"):
        Accounts.load(path)
    path.write_text('{"bob": {"password_hash": "$argon2id$x", "workspaces": ["a/../b"]}}')
    with pytest.raises(ConfigError, match="invalid workspace"):
        Accounts.load(path)
    with pytest.raises(ConfigError, match="at least 8"):
        add_account(path, "bob", "short", ["a"])
    with pytest.raises(ConfigError, match="invalid workspace"):
        add_account(path, "bob", "long enough", ["../up"])
    with pytest.raises(ConfigError, match="invalid user"):
        add_account(path, "bob smith", "long enough", ["a"])


def test_a_saved_account_checks_its_password_and_is_private(tmp_path: Path) -> None:
    path = tmp_path / "accounts.json"
    add_account(path, "bob", "bob-password", ["a", "b"])
    assert path.stat().st_mode & 0o077 == 0
    accounts = Accounts.load(path)
    assert accounts.check_password("bob", "bob-password") == frozenset({"a", "b"})
    assert accounts.check_password("bob", "bob-passwore") is None
    assert "bob-password" not in path.read_text()


@pytest.mark.parametrize(
    ("secret", "reason"),
    [
        (None, "need jwt_secret"),
        ("", "need jwt_secret"),
        ("lightrag-jwt-default-secret", "well-known default"),
        ("changeme", "well-known default"),
        ("a-short-secret", "shorter than 32 bytes"),
        ("ab" * 20, "repeats a few characters"),
    ],
)
def test_unsound_secrets_are_refused(secret: str | None, reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        check_secret(secret)


def test_tokens_name_their_user_and_expire() -> None:
    signer = TokenSigner(JWT_SECRET, 10)
    now = time.time()
    claims = signer.verify(signer.issue("bob", now=now))
    assert claims is not None and claims.user == "bob"
    assert claims.expires == int(now) + 600
    assert signer.verify(signer.issue("bob", now=now - 601)) is None
    assert signer.verify("not.a.token") is None


async def test_repeated_failures_for_one_user_wait_then_may_try_again() -> None:
    now = [1000.0]
    throttle = LoginThrottle(max_failures=3, window_s=60, clock=lambda: now[0])
    log = MemoryLog()
    for _ in range(3):
        assert await throttle.wait_s(log, "10.0.0.1", "alice") == 0
        await throttle.failed(log, "10.0.0.1", "alice")
    assert await throttle.wait_s(log, "10.0.0.1", "alice") == 60
    assert await throttle.wait_s(log, "10.0.0.2", "alice") == 0  # another address
    assert await throttle.wait_s(log, "10.0.0.1", "bob") == 0  # another user
    now[0] += 45
    assert await throttle.wait_s(log, "10.0.0.1", "alice") == 15
    now[0] += 15
    assert await throttle.wait_s(log, "10.0.0.1", "alice") == 0
    await throttle.failed(log, "10.0.0.2", "alice")
    await throttle.succeeded(log, "10.0.0.2", "alice")
    assert log.failures.get(("10.0.0.2", "alice")) is None


@pytest.mark.parametrize("server", ["accounts"], indirect=True)
def test_login_answers_429_after_the_failures_even_with_the_right_password(server: Served) -> None:
    server.app.state.login_throttle = LoginThrottle(max_failures=2, window_s=3600)
    with httpx.Client(base_url=server.base_url) as client:
        for _ in range(2):
            assert (
                client.post("/login", data={"username": ALICE[0], "password": "x" * 9}).status_code
                == 401
            )
        refused = client.post("/login", data={"username": ALICE[0], "password": ALICE[1]})
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 3500
        admin = client.post("/login", data={"username": ADMIN[0], "password": ADMIN[1]})
        assert admin.status_code == 200


def test_failed_logins_count_on_every_server_of_one_store(
    start_server: StartServer, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    servers = [start_server("accounts", workdir=shared) for _ in range(2)]
    for served in servers:
        served.app.state.login_throttle = LoginThrottle(max_failures=2, window_s=3600)
    wrong = {"username": ALICE[0], "password": "x" * 9}
    for served in servers:  # one failure on each server: two for the pair
        assert httpx.post(f"{served.base_url}/login", data=wrong).status_code == 401
    right = {"username": ALICE[0], "password": ALICE[1]}
    assert httpx.post(f"{servers[0].base_url}/login", data=right).status_code == 429
