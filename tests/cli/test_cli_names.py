"""Hostile file names through the CLI: the rest of the folder is indexed, every line escapes names.

Before, a name that is not UTF-8 stopped ``kgrag index`` with a
``UnicodeEncodeError`` (nothing indexed) and a newline in a name broke
``kgrag docs`` into two lines.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli.clean_cli import FAKE, CleanCLI, last_json_line

LONG = "long-" + "x" * 245 + ".txt"  # 255 bytes, the usual limit of a name


@pytest.fixture
def cli(monkeypatch, capsys, tmp_path) -> CleanCLI:
    return CleanCLI(monkeypatch, capsys, tmp_path)


def make(folder: Path, name: bytes, text: str) -> None:
    path = os.path.join(os.fsencode(folder), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(text.encode())


@pytest.fixture
def hostile(tmp_path) -> Path:
    docs = tmp_path / "docs"
    make(docs, b"good.txt", "Scrooge met Marley in London.")
    make(docs, b"bad\xff name.txt", "Scrooge counted coins in London.")
    make(docs, b"new\nline.txt", "Bob Cratchit worked for Scrooge.")
    make(docs, b"tab\tand \x1b[31mred.txt", "Tiny Tim lived with Bob Cratchit.")
    make(docs, b"caf\xe9/inside.txt", "Fezziwig gave a ball in London.")
    make(docs, LONG.encode(), "Belle left Scrooge in the spring.")
    return docs


def test_odd_names_are_indexed_or_skipped_one_line_each_and_listed_escaped(cli, hostile):
    out = cli("index", "--json", "--no-progress", "--workdir", "idx", hostile, env=FAKE)
    assert out.code == 0, out.err  # indexed with skips: the exit status of any skip
    summary = last_json_line(out.out)
    assert summary["new"] == 4 and summary["skipped"] == 2 and summary["failed"] == 0
    skipped = [line for line in out.err.splitlines() if line.startswith("kgrag: skipped")]
    assert len(skipped) == 2 and len(out.err.splitlines()) == 2  # one line per skip, no more
    assert "bad\\xff name.txt: the file name is not valid UTF-8" in skipped[0]
    assert "caf\\xe9: the folder name is not valid UTF-8" in skipped[1]

    text = cli("index", "--no-progress", "--workdir", "idx", hostile, env=FAKE)
    assert text.code == 0 and "4 unchanged" in text.out and "2 file(s) skipped" in text.out

    docs = cli("docs", "--workdir", "idx")
    lines = docs.out.splitlines()
    assert len(lines) == 5 and lines[-1] == "1-4 of 4"  # one line per document
    names = ["good.txt", "new\\nline.txt", "tab\\tand \\x1b[31mred.txt", LONG]
    for name in names:
        assert sum(line.endswith("/" + name) for line in lines) == 1, (name, lines)
    listed = json.loads(cli("docs", "--json", "--workdir", "idx").out)["documents"]
    assert sorted(d["name"] for d in listed) == sorted(names)

    status = cli("status", "--workdir", "idx")
    rejected = [line for line in status.out.splitlines() if "rejected" in line]
    assert len(rejected) == 2 and any("bad\\xff name.txt" in line for line in rejected)


def test_delete_and_disable_take_the_names_docs_lists(cli, hostile):
    assert cli("index", "--no-progress", "--workdir", "idx", hostile, env=FAKE).code == 0
    listed = json.loads(cli("docs", "--json", "--workdir", "idx").out)["documents"]
    by_name = {d["name"]: d["id"] for d in listed}

    out = cli("disable", "--json", "--workdir", "idx", "new\\nline.txt")  # as listed
    assert out.code == 0 and json.loads(out.out)["disabled"] == [by_name["new\\nline.txt"]]
    out = cli("delete", "--json", "--workdir", "idx", "good.txt")  # a relative path, as listed
    assert out.code == 0 and json.loads(out.out)["deleted"] == [by_name["good.txt"]]

    missing = cli("delete", "--workdir", "idx", "no\nsuch.txt")
    assert missing.code == 2 and "'no\\nsuch.txt'" in missing.err
    assert len(missing.err.strip().splitlines()) == 1


def test_a_name_two_documents_answer_to_is_refused_with_their_ids(cli, tmp_path):
    for folder in ("a", "b"):
        make(tmp_path / folder, b"joe.txt", f"Joe lived in folder {folder}.")
        assert cli("index", "--no-progress", "--workdir", "idx", folder, env=FAKE).code == 0
    ids = sorted(
        d["id"] for d in json.loads(cli("docs", "--json", "--workdir", "idx").out)["documents"]
    )
    out = cli("delete", "--workdir", "idx", "joe.txt")
    assert out.code == 2 and "'joe.txt' names 2 documents" in out.err
    assert all(i in out.err for i in ids) and "give the id" in out.err
    one = cli("delete", "--json", "--workdir", "idx", "a/joe.txt")  # a path picks one
    assert one.code == 0 and len(json.loads(one.out)["deleted"]) == 1


def test_query_references_show_a_file_name_on_one_line():
    from kgrag.cli.reference_view import reference_block
    from kgrag.retrieval.reference import Reference

    ref = Reference(1, "chunk", "chunk-1", file_path="docs/new\nline.txt", section=["A\nB"])
    lines = reference_block(ref)
    assert "docs/new\\nline.txt" in lines[0] and "A\\nB" in "".join(lines)
    assert all("\n" not in line for line in lines)
