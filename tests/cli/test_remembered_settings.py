"""An index remembers how it was built: later commands in a clean environment need not be told.

Indexed with non-default settings (the fake embedder at 48 dimensions, 300
token chunks, German), then ``status``, ``query``, ``export``, ``docs`` and
``check`` run with no KGRAG_ variable at all; a conflicting explicit
setting fails with exit 2; a Chinese corpus is detected as such.
"""

from __future__ import annotations

import json

import pytest

from tests.cli.clean_cli import DEAD_LLM, FAKE, CleanCLI, last_json_line

BUILT = FAKE | {
    "KGRAG_EMBEDDING_DIM": "48",
    "KGRAG_CHUNK_SIZE": "300",
    "KGRAG_CHUNK_OVERLAP": "20",
    "KGRAG_LANGUAGE": "German",
}
STORY = (
    "Scrooge met Marley in London. Marley was dead to begin with. "
    "Bob Cratchit worked for Scrooge in a cold office in London. "
    "Fred invited Scrooge to Christmas dinner, and Scrooge refused."
)
CHINESE = "孙中山先生出生于广东省香山县。他在檀香山读书，后来到香港学医。孙中山创立了兴中会。"


@pytest.fixture
def cli(monkeypatch, capsys, tmp_path) -> CleanCLI:
    return CleanCLI(monkeypatch, capsys, tmp_path)


@pytest.fixture
def built(cli, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "story.txt").write_text(STORY)
    out = cli("index", "--json", "--no-progress", "--workdir", "idx", docs, env=BUILT)
    assert out.code == 0, out.err
    return tmp_path / "idx"


def test_later_commands_use_the_remembered_settings(cli, built, tmp_path):
    status = cli("status", "--json", "--workdir", built)
    assert status.code == 0, status.err
    info = json.loads(status.out)
    assert info["embedding"] == "fake-embed:48"
    remembered = info["settings"]
    assert remembered["embedding_provider"] == "fake" and remembered["embedding_dim"] == 48
    assert (remembered["chunk_size"], remembered["chunk_overlap"]) == (300, 20)
    assert (remembered["language"], remembered["language_source"]) == ("German", "set")

    # The fake embedder at 48 dimensions, not the local default: the vectors match.
    query = cli("query", "--json", "--workdir", built, "--mode", "naive", "Who is Scrooge?")
    assert query.code == 0, query.err
    assert "Scrooge" in json.loads(query.out)["answer"]

    assert cli("docs", "--workdir", built).code == 0
    check = cli("check", "--workdir", built)
    assert check.code == 0 and check.out.startswith("index is consistent"), check.out
    export = cli("export", "--workdir", built, "--output", tmp_path / "graph.json")
    assert export.code == 0, export.err
    assert any(
        n["name"] == "Scrooge"
        for n in json.loads((tmp_path / "graph.json").read_text())["entities"]
    )


def test_status_text_and_index_summary_say_how_the_index_was_built(cli, built):
    status = cli("status", "--workdir", built)
    assert "language: German (set); embedder: fake (dim 48); extractor: llm; chunks: 300" in (
        status.out
    )


def test_a_conflicting_setting_fails_with_one_line_and_status_2(cli, built):
    out = cli("query", "--workdir", built, "Who?", env={"KGRAG_CHUNK_SIZE": "500"})
    assert out.code == 2
    [line] = out.err.strip().splitlines()
    assert "chunk_size=300 in the index but 500 is set (KGRAG_CHUNK_SIZE)" in line
    out = cli("status", "--workdir", built, env={"KGRAG_EMBEDDING_PROVIDER": "local"})
    assert out.code == 2 and "embedding_provider='fake' in the index but 'local'" in out.err
    # Settings that do not decide what is stored may differ.
    assert cli("status", "--workdir", built, env={"KGRAG_LANGUAGE": "French"}).code == 0


def test_reset_if_settings_changed_rebuilds_with_the_new_embedder(cli, built, tmp_path):
    changed = FAKE | {"KGRAG_EMBEDDING_DIM": "32"}
    refused = cli("index", "--no-progress", "--workdir", built, tmp_path / "docs", env=changed)
    assert refused.code == 2 and "embedding_dim=48 in the index but 32" in refused.err
    out = cli(
        "index",
        "--json",
        "--no-progress",
        "--reset-if-settings-changed",
        "--workdir",
        built,
        tmp_path / "docs",
        env=changed,
    )
    assert out.code == 0, out.err
    assert "embedding_dim 48 -> 32" in out.err and "emptied the index" in out.err
    assert last_json_line(out.out)["new"] == 1
    status = json.loads(cli("status", "--json", "--workdir", built).out)
    assert status["embedding"] == "fake-embed:32" and status["settings"]["chunk_size"] == 1200
    again = cli(
        "index",
        "--json",
        "--no-progress",
        "--reset-if-settings-changed",
        "--workdir",
        built,
        tmp_path / "docs",
        env=changed,
    )
    assert "emptied" not in again.err and last_json_line(again.out)["unchanged"] == 1


def test_an_index_built_offline_is_rebuilt_when_an_llm_is_configured(cli, tmp_path):
    """``make demo``: built with the NLP extractor, indexed again once an LLM is configured."""
    (tmp_path / "book.txt").write_text(STORY)
    offline = {"KGRAG_EMBEDDING_PROVIDER": "fake", "KGRAG_EXTRACTOR": "nlp"}
    demo = ("index", "--json", "--no-progress", "--reset-if-settings-changed", "--workdir", "demo")
    assert cli(*demo, tmp_path / "book.txt", env=offline).code == 0
    same = cli(*demo, tmp_path / "book.txt", env={"KGRAG_EMBEDDING_PROVIDER": "fake"})
    assert same.code == 0 and "emptied" not in same.err  # the index's extractor is remembered
    with_llm = cli(*demo, tmp_path / "book.txt", env=FAKE)
    assert with_llm.code == 0, with_llm.err
    assert "extractor 'nlp' -> 'llm'" in with_llm.err
    summary = last_json_line(with_llm.out)
    assert summary["new"] == 1 and summary["llm_calls"] > 0
    assert json.loads(cli("status", "--json", "--workdir", "demo").out)["graph"]["built_by"] == [
        "llm"
    ]


def test_a_chinese_corpus_is_detected_and_said(cli, tmp_path):
    (tmp_path / "zh.txt").write_text(CHINESE)
    out = cli("index", "--no-progress", "--workdir", "zh", tmp_path / "zh.txt", env=FAKE)
    assert out.code == 0, out.err
    assert "language: Chinese (detected)" in out.out
    settings = json.loads(cli("status", "--json", "--workdir", "zh").out)["settings"]
    assert (settings["language"], settings["language_source"]) == ("Chinese", "detected")
    # Set explicitly, the language is not detected.
    out = cli(
        "index",
        "--no-progress",
        "--workdir",
        "zh-en",
        tmp_path / "zh.txt",
        env=FAKE | {"KGRAG_LANGUAGE": "English"},
    )
    assert "language: English (set)" in out.out


def test_a_first_run_that_skipped_every_file_does_not_block_the_next(cli, tmp_path):
    (tmp_path / "notes.xyz").write_text("unsupported")
    (tmp_path / "story.txt").write_text(STORY)
    skipped = cli("index", "--no-progress", "--workdir", "idx", tmp_path / "notes.xyz",
                  env=FAKE | {"KGRAG_EMBEDDING_DIM": "48"})  # fmt: skip
    assert skipped.code == 1 and "nothing could be read" in skipped.err
    good = cli("index", "--json", "--no-progress", "--workdir", "idx", tmp_path / "story.txt",
               env=FAKE | {"KGRAG_EMBEDDING_DIM": "32"})  # fmt: skip
    assert good.code == 0, good.err
    status = json.loads(cli("status", "--json", "--workdir", "idx").out)
    assert status["embedding"] == "fake-embed:32" and status["settings"]["embedding_dim"] == 32


def test_an_index_whose_documents_all_failed_adopts_the_next_runs_settings(cli, tmp_path):
    """Nothing committed binds no settings; the first run that commits records its own."""
    (tmp_path / "story.txt").write_text(STORY)
    index = ("index", "--json", "--no-progress", "--workdir", "idx", tmp_path / "story.txt")
    failed = cli(*index, env=DEAD_LLM | {"KGRAG_CHUNK_SIZE": "300", "KGRAG_LANGUAGE": "German"})
    assert failed.code == 1 and last_json_line(failed.out)["failed"] == 1
    good = cli(*index, env=FAKE | {"KGRAG_CHUNK_SIZE": "500", "KGRAG_EMBEDDING_DIM": "32"})
    assert good.code == 0, good.err
    assert last_json_line(good.out)["processed"] == 1
    settings = json.loads(cli("status", "--json", "--workdir", "idx").out)["settings"]
    assert (settings["chunk_size"], settings["embedding_dim"]) == (500, 32)
    assert settings["language"] == "German"  # set by the first run, contradicted by none
    # Committed now: the record binds.
    refused = cli(*index, env=FAKE | {"KGRAG_CHUNK_SIZE": "300"})
    assert refused.code == 2 and "chunk_size=500 in the index but 300" in refused.err
