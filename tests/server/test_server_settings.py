"""The server section of the settings: read from KGRAG_* variables, validated, secrets masked."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kgrag.config.check import mask
from kgrag.config.settings import Settings
from kgrag.errors import SettingsError

KEY = "settings-test-key-0123456789"
VARIABLES = {
    "KGRAG_HOST": "0.0.0.0",
    "KGRAG_PORT": "8000",
    "KGRAG_API_KEY": KEY,
    "KGRAG_API_KEYS": json.dumps({KEY + "-alpha": ["alpha", "beta"]}),
    "KGRAG_JWT_SECRET": "s" * 40,
    "KGRAG_ACCOUNTS_FILE": "accounts.json",
    "KGRAG_TOKEN_MINUTES": "30",
    "KGRAG_CORS_ORIGINS": "http://a.example:3000, https://b.example/",
    "KGRAG_MAX_BODY_MB": "2",
    "KGRAG_MAX_UPLOAD_MB": "50.5",
    "KGRAG_CREATE_WORKSPACES": "false",
}


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    for name in [n for n in os.environ if n.startswith("KGRAG_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def test_every_server_variable_is_read_and_none_looks_like_a_typo(clean_env) -> None:
    for name, value in VARIABLES.items():
        clean_env.setenv(name, value)
    server = Settings().server
    assert (server.host, server.port, server.api_key) == ("0.0.0.0", 8000, KEY)
    assert server.api_keys == {KEY + "-alpha": ["alpha", "beta"]}
    assert server.accounts_file == Path("accounts.json") and server.token_minutes == 30
    assert server.cors_origins == ["http://a.example:3000", "https://b.example"]
    assert (server.max_body_mb, server.max_upload_mb) == (2.0, 50.5)
    assert server.create_workspaces is False


def test_a_misspelt_server_variable_is_named(clean_env) -> None:
    clean_env.setenv("KGRAG_JWT_SECRT", "x" * 40)
    with pytest.raises(SettingsError, match="KGRAG_JWT_SECRET"):
        Settings()


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"api_keys": '{"short": ["a"]}'}, "shorter than 16"),
        ({"api_keys": {KEY: []}}, "must list its workspaces"),
        ({"api_keys": {KEY: ["../etc"]}}, "invalid workspace"),
        ({"cors_origins": "*"}, "'*' is not allowed"),
        ({"cors_origins": ["http://a.example/path"]}, "nothing after"),
        ({"port": 70000}, "at most 65535"),
        ({"api_key": "short"}, "at least 16"),
        ({"max_body_mb": 0}, "greater than 0"),
        ({"token_minutes": 0}, "at least 1"),
    ],
)
def test_bad_server_values_are_one_sentence_each(clean_env, values: dict, words: str) -> None:
    with pytest.raises(SettingsError, match=words):
        Settings(**values)


def test_secrets_are_masked_wherever_settings_are_shown() -> None:
    assert mask("api_key", KEY) == "…6789"
    assert mask("jwt_secret", "s" * 40) == "…ssss"
    assert mask("api_keys", {KEY: ["a"]}) == {"…6789": ["a"]}


def test_kgrag_config_shows_the_server_section_masked(clean_env, capsys) -> None:
    from kgrag.cli.main import main

    clean_env.setenv("KGRAG_API_KEY", KEY)
    clean_env.setenv("KGRAG_JWT_SECRET", "secret-value-" + "q" * 30)
    assert main(["config", "--json"]) == 0
    out = capsys.readouterr().out
    assert KEY not in out and "secret-value" not in out
    assert "api_key" in out and "max_upload_mb" in out
