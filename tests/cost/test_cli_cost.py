"""``kgrag cost``: the formula first, the tables, ``--json``, ``--since``, ``--by``."""

from __future__ import annotations

from tests.cli.clean_cli import FAKE, CleanCLI, last_json_line

from .helpers import QUESTION, corpus

FIGURE = {"calls", "cache_hits", "prompt_tokens", "completion_tokens", "seconds", "errors", "usd"}
PRICES = '{"fake": [1, 2], "fake-embed:384": [0.5, 0]}'


def _built(tmp_path, monkeypatch, capsys) -> tuple[CleanCLI, str]:
    cli, idx = CleanCLI(monkeypatch, capsys, tmp_path), str(tmp_path / "idx")
    env = {**FAKE, "KGRAG_EXTRACTOR": "llm"}
    assert cli("index", "--workdir", idx, "--no-progress", *corpus(tmp_path), env=env).code == 0
    assert cli("query", "--workdir", idx, "--mode", "local", QUESTION, env=env).code == 0
    return cli, idx


def test_text_starts_with_the_formula(tmp_path, monkeypatch, capsys):
    cli, idx = _built(tmp_path, monkeypatch, capsys)
    done = cli("cost", "--workdir", idx, "--by", "document", env=FAKE)
    lines = done.out.splitlines()
    assert done.code == 0 and lines[0] == "total = initial index + updates + queries"
    calls = next(line for line in lines if line.strip().startswith("calls:"))
    total, parts = calls.split(":")[1].split("=")
    assert int(total) == sum(int(p) for p in parts.split("+")) and int(total) > 0
    assert "by operation:" in lines and "costliest documents (top 2):" in lines
    assert any("ada.txt" in line for line in lines)
    assert any(line.strip().startswith("USD:") and "n/a" in line for line in lines)
    priced = cli("cost", "--workdir", idx, "--by", "model", env={**FAKE, "KGRAG_PRICES": PRICES})
    assert "by model:" in priced.out and "n/a" not in priced.out and "$" in priced.out


def test_json_shape(tmp_path, monkeypatch, capsys):
    cli, idx = _built(tmp_path, monkeypatch, capsys)
    done = cli("cost", "--workdir", idx, "--json", env={**FAKE, "KGRAG_PRICES": PRICES})
    data = last_json_line(done.out)
    assert set(data) == {
        "formula",
        "since",
        "priced",
        "total",
        "parts",
        "earlier",
        "operations",
        "models",
        "documents",
        "unpriced",
    }
    assert data["formula"] == "total = initial index + updates + queries"
    assert set(data["parts"]) == {"initial index", "updates", "queries"}
    assert set(data["total"]) == FIGURE and set(data["operations"]) == {"index", "query:local"}
    assert all(set(f) == FIGURE for f in data["operations"].values())
    assert all(set(d) == FIGURE | {"document", "file_path"} for d in data["documents"])
    assert data["priced"] is True and data["unpriced"] == [] and data["since"] is None
    assert data["total"]["calls"] == sum(p["calls"] for p in data["parts"].values())
    assert data["total"]["usd"] > 0


def test_since_and_bad_dates(tmp_path, monkeypatch, capsys):
    cli, idx = _built(tmp_path, monkeypatch, capsys)
    future = cli("cost", "--workdir", idx, "--json", "--since", "2999-01-01", env=FAKE)
    data = last_json_line(future.out)
    assert data["since"] == "2999-01-01" and data["total"]["calls"] == 0
    assert data["operations"] == {} and data["earlier"] is None
    past = last_json_line(cli("cost", "--workdir", idx, "--json", "--since", "2000-01-01").out)
    assert past["total"]["calls"] > 0
    bad = cli("cost", "--workdir", idx, "--since", "yesterday", env=FAKE)
    assert bad.code == 2 and "--since must be a date as YYYY-MM-DD" in bad.err


def test_no_index_is_a_usage_error(tmp_path, monkeypatch, capsys):
    cli = CleanCLI(monkeypatch, capsys, tmp_path)
    done = cli("cost", "--workdir", tmp_path / "nothing", env=FAKE)
    assert done.code == 2 and "no index" in done.err
