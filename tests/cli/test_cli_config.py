"""``kgrag config``: every effective setting and where it came from, secrets masked."""

from __future__ import annotations

import json

import pytest

from tests.cli.clean_cli import FAKE, CleanCLI

KEY = "sk-live-0123456789abcdef"


@pytest.fixture
def cli(monkeypatch, capsys, tmp_path) -> CleanCLI:
    return CleanCLI(monkeypatch, capsys, tmp_path)


def config(cli: CleanCLI, *args: object, env: dict[str, str] | None = None) -> dict:
    out = cli("config", "--json", *args, env=env)
    assert out.code == 0, out.err
    return json.loads(out.out)


def test_each_source_is_named(cli, tmp_path):
    (tmp_path / ".env").write_text("KGRAG_TOP_K=12\n")
    rows = config(
        cli, "--workdir", "elsewhere", env={"KGRAG_CHUNK_SIZE": "500", "OPENAI_API_KEY": KEY}
    )
    assert rows["workdir"] == {"value": "elsewhere", "source": "command line (--workdir)"}
    assert rows["chunk_size"] == {"value": 500, "source": "environment (KGRAG_CHUNK_SIZE)"}
    assert rows["top_k"] == {"value": 12, "source": ".env (KGRAG_TOP_K)"}
    assert rows["max_total_tokens"] == {"value": 30000, "source": "default"}
    assert rows["llm_api_key"]["source"] == "environment (OPENAI_API_KEY)"
    assert not (tmp_path / "elsewhere").exists()  # config creates no index


def test_secrets_are_masked_in_both_forms(cli):
    env = {"KGRAG_LLM_API_KEY": KEY, "KGRAG_RERANK_API_KEY": "short"}
    rows = config(cli, env=env)
    assert rows["llm_api_key"]["value"] == "…cdef"
    assert rows["rerank_api_key"]["value"] == "***"
    text = cli("config", env=env)
    assert KEY not in text.out and "short" not in text.out and "…cdef" in text.out


def test_the_index_is_a_source(cli, tmp_path):
    (tmp_path / "a.txt").write_text("Scrooge met Marley in London.")
    built = FAKE | {"KGRAG_EMBEDDING_DIM": "48", "KGRAG_CHUNK_SIZE": "300"}
    assert (
        cli("index", "--no-progress", "--workdir", "idx", tmp_path / "a.txt", env=built).code == 0
    )
    rows = config(cli, "--workdir", "idx")
    assert rows["embedding_dim"] == {"value": 48, "source": "index"}
    assert rows["chunk_size"] == {"value": 300, "source": "index"}
    assert rows["embedding_provider"] == {"value": "fake", "source": "index"}
    text = cli("config", "--workdir", "idx")
    line = next(x for x in text.out.splitlines() if x.startswith("chunk_size"))
    assert line.split() == ["chunk_size", "300", "[index]"]


def test_a_conflict_with_the_index_is_reported(cli, tmp_path):
    (tmp_path / "a.txt").write_text("Scrooge met Marley in London.")
    assert cli("index", "--no-progress", "--workdir", "idx", tmp_path / "a.txt", env=FAKE).code == 0
    out = cli("config", "--workdir", "idx", env={"KGRAG_CHUNK_SIZE": "300"})
    assert out.code == 2 and "chunk_size=1200 in the index but 300 is set" in out.err


def test_an_invalid_setting_is_one_line_and_status_2(cli):
    out = cli("config", env={"KGRAG_CHUNK_OVERLAP": "5000"})
    assert out.code == 2 and out.out == ""
    assert out.err.strip().splitlines() == [
        "kgrag: error: chunk_overlap=5000 must be smaller than chunk_size=1200"
    ]
