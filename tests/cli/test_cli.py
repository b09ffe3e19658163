"""The command line, run as a real process with the built-in fake models."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.indexing.corpus import write_book_parts


def kgrag(*args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGRAG_", "OPENAI_"))}
    env.update(KGRAG_LLM_PROVIDER="fake", KGRAG_EMBEDDING_PROVIDER="fake")
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "kgrag.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_index_json_status_and_query(tmp_path):
    docs = tmp_path / "docs"
    write_book_parts(docs, 3, chars=3000)
    (docs / "notes.xyz").write_text("unsupported")
    work = str(tmp_path / "idx")

    out = kgrag("index", "--json", "--workdir", work, str(docs))
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    for key in (
        "documents",
        "chunks",
        "entities",
        "relations",
        "llm_calls",
        "prompt_tokens",
        "completion_tokens",
        "insert_s",
    ):
        assert key in summary
    assert summary["documents"] == 3 and summary["entities"] > 0
    assert summary["llm_calls"] >= 2 * summary["chunks"]
    assert "notes.xyz" in out.stderr  # the skipped file is named

    status = json.loads(kgrag("status", "--json", "--workdir", work).stdout)
    assert status["documents"]["processed"]["count"] == 3
    assert len(status["documents"]["processed"]["ids"]) == 3
    assert status["graph"]["entities"] == summary["entities"]
    assert status["llm_all_time"]["extract"]["calls"] == summary["chunks"]

    again = kgrag("index", "--json", "--workdir", work, str(docs))
    assert json.loads(again.stdout.strip().splitlines()[-1])["llm_calls"] == 0
    assert json.loads(again.stdout.strip().splitlines()[-1])["unchanged"] == 3
    assert "duplicate" not in again.stderr  # unchanged files are skipped quietly

    questions = tmp_path / "q.txt"
    questions.write_text("Who is Scrooge?\n\nWhat is Christmas about?\n")
    out = kgrag(
        "query",
        "--workdir",
        work,
        "--mode",
        "local",
        "--context-only",
        "--questions-file",
        str(questions),
    )
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["question"] for r in rows] == ["Who is Scrooge?", "What is Christmas about?"]
    assert all(r["latency_s"] > 0 and r["context_chars"] > 0 for r in rows)

    out = kgrag("query", "--workdir", work, "--data-only", "--questions-file", str(questions))
    data = json.loads(out.stdout.splitlines()[0])["data"]
    assert data["chunks"] and all(c["file_path"].endswith(".txt") for c in data["chunks"])


def test_unknown_provider_names_the_known_ones(tmp_path):
    (tmp_path / "a.txt").write_text("Scrooge met Marley.")
    work = str(tmp_path / "idx")
    out = kgrag(
        "index",
        "--workdir",
        work,
        str(tmp_path / "a.txt"),
        env_extra={"KGRAG_LLM_PROVIDER": "nope"},
    )
    assert out.returncode == 2
    assert "nope" in out.stderr and "openai" in out.stderr and "ollama" in out.stderr


def test_retry_resumes_nothing_when_all_is_done(tmp_path):
    (tmp_path / "a.txt").write_text("Scrooge met Marley.")
    assert (
        kgrag("index", "--workdir", str(tmp_path / "idx"), str(tmp_path / "a.txt")).returncode == 0
    )
    out = kgrag("retry", "--json", "--workdir", str(tmp_path / "idx"))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["processed"] == 0
