"""The exit-status table, command by command (the table is in ``kgrag --help``).

0 success; 1 a handled failure (documents failed, check found problems, a
model or the store stopped the command); 2 a usage or configuration error
(bad arguments, invalid settings, no index at the workdir, a document id
that names nothing); 130 interrupted.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from tests.cli.clean_cli import FAKE, CleanCLI, last_json_line
from tests.support.fake_openai import fake_openai

STORY = "Scrooge met Marley in London. Marley was dead. Bob Cratchit worked for Scrooge."

# every command that reads an index, with the arguments it needs
READERS = {
    "status": (),
    "query": ("Who is Scrooge?",),
    "docs": (),
    "check": (),
    "export": ("--output", "graph.json"),
    "delete": ("doc-x",),
    "disable": ("doc-x",),
    "enable": ("doc-x",),
    "retry": (),
    "rebuild": (),
}


@pytest.fixture
def cli(monkeypatch, capsys, tmp_path) -> CleanCLI:
    return CleanCLI(monkeypatch, capsys, tmp_path)


@pytest.fixture
def built(cli, tmp_path):
    (tmp_path / "story.txt").write_text(STORY)
    out = cli("index", "--json", "--no-progress", "--workdir", "idx", "story.txt", env=FAKE)
    assert out.code == 0, out.err
    return tmp_path / "idx"


def doc_id(cli: CleanCLI, workdir) -> str:
    import json

    return json.loads(cli("docs", "--json", "--workdir", workdir).out)["documents"][0]["id"]


@pytest.mark.parametrize("command", sorted(READERS))
def test_2_for_a_workdir_without_an_index_and_nothing_is_created(cli, tmp_path, command):
    out = cli(command, "--workdir", "typo", *READERS[command], env=FAKE)
    assert out.code == 2
    assert out.err.strip().splitlines() == [
        f"kgrag: error: no index at {tmp_path / 'typo'} "
        f"(run 'kgrag index --workdir {tmp_path / 'typo'} PATH...' to create one)"
    ]
    assert not (tmp_path / "typo").exists()


@pytest.mark.parametrize("command", [*sorted(READERS), "index", "config"])
def test_2_for_an_invalid_setting_in_one_line(cli, built, command):
    args = {**READERS, "index": ("story.txt",), "config": ()}[command]
    out = cli(command, "--workdir", built, *args, env=FAKE | {"KGRAG_TOP_K": "0"})
    assert out.code == 2
    assert out.err.strip().splitlines() == [
        "kgrag: error: top_k=0: must be at least 1 (from KGRAG_TOP_K)"
    ]


def test_0_for_every_command_on_an_index(cli, built, tmp_path):
    doc = doc_id(cli, built)
    runs = [
        ("index", "--no-progress", "story.txt"),
        ("status",),
        ("query", "Who is Scrooge?"),
        ("docs",),
        ("check",),
        ("export", "--output", tmp_path / "graph.json"),
        ("disable", doc),
        ("enable", doc),
        ("retry", "--no-progress"),
        ("rebuild", "--no-progress"),
        ("config",),
        ("delete", doc),
    ]
    for command, *args in runs:
        out = cli(command, "--workdir", built, *args, env=FAKE)
        assert out.code == 0, f"kgrag {command}: {out.err}"


def test_2_for_usage_errors(cli, built):
    assert cli("index", "--workdir", built).code == 2  # no PATH (argparse)
    assert cli("status", "--workdir", built, "--bogus").code == 2
    assert cli("query", "--workdir", built, env=FAKE).code == 2  # no question
    top = cli("query", "--workdir", built, "--top-k", "0", "Who?", env=FAKE)
    assert top.code == 2 and "must be at least 1" in top.err
    assert cli("delete", "--workdir", built, env=FAKE).code == 2  # nothing named
    gone = cli("delete", "--workdir", built, "doc-nothing-like-this", env=FAKE)
    assert gone.code == 2 and "doc-nothing-like-this" in gone.err
    conflict = cli("status", "--workdir", built, env={"KGRAG_CHUNK_SIZE": "600"})
    assert conflict.code == 2 and "chunk_size=1200 in the index but 600" in conflict.err


def test_1_when_a_named_path_is_missing(cli, tmp_path):
    out = cli("index", "--no-progress", "--workdir", "idx", "nope.txt", env=FAKE)
    assert out.code == 1 and "no such file or folder: nope.txt" in out.err
    assert not (tmp_path / "idx").exists()


def test_1_when_documents_fail(cli, tmp_path):
    (tmp_path / "story.txt").write_text(STORY)
    with fake_openai(error_rate=1.0) as server:
        env = {
            "KGRAG_LLM_PROVIDER": "openai",
            "KGRAG_LLM_BASE_URL": server.base_url,
            "KGRAG_LLM_API_KEY": "sk-test",
            "KGRAG_LLM_MAX_RETRIES": "0",
            "KGRAG_EMBEDDING_PROVIDER": "fake",
        }
        out = cli("index", "--json", "--no-progress", "--workdir", "idx", "story.txt", env=env)
    assert out.code == 1, out.err
    assert last_json_line(out.out)["failed"] == 1 and "kgrag: failed" in out.err


def test_1_when_check_finds_problems(cli, built):
    with sqlite3.connect(built / "kgrag.db") as db:  # lose every chunk vector
        [(space,)] = db.execute("SELECT id FROM vector_spaces WHERE ns = 'chunks'").fetchall()
        assert db.execute(f"DELETE FROM vec_{space}").rowcount > 0
    db.close()
    out = cli("check", "--workdir", built)
    assert out.code == 1 and "problem" in out.out


def test_1_when_a_query_cannot_be_answered(cli, tmp_path):
    """The chat model is gone and the mode has nothing to fall back on (bypass)."""
    (tmp_path / "story.txt").write_text(STORY)
    built = cli("index", "--no-progress", "--workdir", "idx", "story.txt", env=FAKE)
    assert built.code == 0, built.err
    with fake_openai() as server:
        dead = server.base_url
    env = FAKE | {
        "KGRAG_LLM_PROVIDER": "openai",
        "KGRAG_LLM_BASE_URL": dead,
        "KGRAG_LLM_API_KEY": "sk-test",
        "KGRAG_LLM_MAX_RETRIES": "0",
    }
    out = cli("query", "--workdir", "idx", "--mode", "bypass", "Who is Scrooge?", env=env)
    assert out.code == 1, out.err
    assert out.err.startswith("kgrag: error: ")
    assert "127.0.0.1" not in out.err


def test_0_and_a_note_when_only_the_embedder_is_gone(cli, tmp_path):
    """The embedding service is gone: the lexical index answers, and stderr says so."""
    (tmp_path / "story.txt").write_text(STORY)
    with fake_openai() as server:
        env = FAKE | {
            "KGRAG_EMBEDDING_PROVIDER": "openai",
            "KGRAG_EMBEDDING_BASE_URL": server.base_url,
            "KGRAG_EMBEDDING_API_KEY": "sk-test",
            "KGRAG_LLM_MAX_RETRIES": "0",
        }
        built = cli("index", "--no-progress", "--workdir", "idx", "story.txt", env=env)
        assert built.code == 0, built.err
    out = cli("query", "--workdir", "idx", "Who is Scrooge?", env=env)
    assert out.code == 0, out.err
    assert "lexical" in out.err


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_130_when_interrupted(tmp_path):
    """Ctrl-C while a chat call hangs: a one-line note and status 130."""
    (tmp_path / "story.txt").write_text(STORY)
    with fake_openai(hang_rate=1.0) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("KGRAG_", "OPENAI_"))}
        env |= {
            "KGRAG_LLM_PROVIDER": "openai",
            "KGRAG_LLM_BASE_URL": server.base_url,
            "KGRAG_LLM_API_KEY": "sk-test",
            "KGRAG_EMBEDDING_PROVIDER": "fake",
        }
        proc = subprocess.Popen(
            [sys.executable, "-m", "kgrag.cli.main", *("index", "--workdir", "idx", "story.txt")],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # A shell that runs the suite in the background ignores SIGINT, and
            # children inherit that; a terminal's Ctrl-C is what is tested here.
            preexec_fn=_default_sigint,
        )
        try:
            deadline = time.monotonic() + 60
            while server.stats()["hangs"] == 0:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "no chat call arrived"
                time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130, err
    assert "kgrag: interrupted; run the same command again to resume" in err


def test_the_table_is_in_the_help(cli):
    for args in (("--help",), ("index", "--help"), ("query", "--help")):
        out = cli(*args)
        assert out.code == 0
        assert "exit status:" in out.out and "130" in out.out and "no index" in out.out


def test_a_closed_output_pipe_is_not_a_traceback(tmp_path):
    """`kgrag config | head -1`: the reader leaving early is not an error of kgrag's."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write now fails with EPIPE
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "kgrag.cli.main", "config"],
            cwd=tmp_path,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
