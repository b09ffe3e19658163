"""``kgrag entity | relation | merges | unmerge`` in this process, with the fake models."""

from __future__ import annotations

import json

import pytest

from tests.cli.clean_cli import FAKE, CleanCLI

from .helpers import DOC_A, DOC_B

ENV = {**FAKE, "KGRAG_SPLIT_BY_CHARACTER": "\n\n", "KGRAG_SPLIT_BY_CHARACTER_ONLY": "true"}


@pytest.fixture
def cli(monkeypatch, capsys, tmp_path):
    return CleanCLI(monkeypatch, capsys, tmp_path)


def _exported(cli, work) -> dict:
    done = cli("export", "--workdir", work, "--output", "out.json", "--no-timestamps", env=ENV)
    assert done.code == 0
    return json.loads((cli.cwd / "out.json").read_text(encoding="utf-8"))


def test_merge_list_unmerge_and_edit_from_the_command_line(cli, tmp_path):
    (tmp_path / "a.txt").write_text(DOC_A, encoding="utf-8")
    (tmp_path / "b.txt").write_text(DOC_B, encoding="utf-8")
    work = tmp_path / "idx"
    assert cli("index", "--no-progress", "--workdir", work, "a.txt", "b.txt", env=ENV).code == 0
    before = _exported(cli, work)

    done = cli(
        "entity",
        "merge",
        "Scrooge",
        "--into",
        "Ebenezer Scrooge",
        "--json",
        "--workdir",
        work,
        env=ENV,
    )
    assert done.code == 0, done.err
    mid = json.loads(done.out)["merge_id"]
    listed = cli("merges", "--json", "--workdir", work, env=ENV)
    assert [m["id"] for m in json.loads(listed.out)] == [mid]
    merged = _exported(cli, work)
    assert merged["curation"]["aliases"] == [
        {"alias": "Scrooge", "target": "Ebenezer Scrooge", "merge": mid}
    ]
    assert "Scrooge" not in {e["name"] for e in merged["entities"]}
    assert cli("check", "--workdir", work, env=ENV).code == 0

    edit = cli("entity", "edit", "London", "--description", "A city.", "--workdir", work, env=ENV)
    assert edit.code == 0, edit.err
    rel = cli(
        "relation", "edit", "London", "Bob Cratchit", "--weight", "3", "--workdir", work, env=ENV
    )
    assert rel.code == 0, rel.err
    got = _exported(cli, work)
    assert {e["name"]: e for e in got["entities"]}["London"]["description"] == "A city."
    assert (
        cli("entity", "edit", "London", "--clear", "description", "--workdir", work, env=ENV).code
        == 0
    )
    assert (
        cli(
            "relation",
            "edit",
            "London",
            "Bob Cratchit",
            "--weight",
            "1",
            "--workdir",
            work,
            env=ENV,
        ).code
        == 0
    )

    assert cli("unmerge", mid, "--workdir", work, env=ENV).code == 0
    after = _exported(cli, work)
    assert after["entities"] == before["entities"]
    assert after["curation"]["aliases"] == [] and after["curation"]["merges"] == []


def test_unknown_names_and_merge_ids_exit_2(cli, tmp_path):
    (tmp_path / "a.txt").write_text(DOC_A, encoding="utf-8")
    work = tmp_path / "idx"
    assert cli("index", "--no-progress", "--workdir", work, "a.txt", env=ENV).code == 0
    gone = cli("entity", "delete", "Nobody", "--workdir", work, env=ENV)
    assert gone.code == 2 and "Nobody" in gone.err
    assert cli("unmerge", "m-0000", "--workdir", work, env=ENV).code == 2
    assert cli("relation", "delete", "London", "Nobody", "--workdir", work, env=ENV).code == 2
    assert cli("entity", "merge", "London", "--workdir", work, env=ENV).code == 2  # no --into
    assert cli("entity", "delete", "London", "--workdir", work, env=ENV).code == 0
    assert cli("entity", "restore", "London", "--workdir", work, env=ENV).code == 0
    assert cli("check", "--workdir", work, env=ENV).code == 0


def test_split_list_and_unsplit_from_the_command_line(cli, tmp_path):
    (tmp_path / "p.txt").write_text(
        "Apple sold phones in London.\n\nApple grew in the orchard of Bob Cratchit.",
        encoding="utf-8",
    )
    work = tmp_path / "idx"
    assert cli("index", "--no-progress", "--workdir", work, "p.txt", env=ENV).code == 0
    before = _exported(cli, work)
    fruit = next(c["id"] for c in before["chunks"] if "orchard" in c["content"])

    part = f"Apple (fruit)={fruit}"
    done = cli("split", "Apple", "--part", part, "--json", "--workdir", work, env=ENV)
    assert done.code == 0, done.err
    sid = json.loads(done.out)["split_id"]
    listed = cli("splits", "--json", "--workdir", work, env=ENV)
    assert [(s["id"], s["parts"]) for s in json.loads(listed.out)] == [
        (sid, {"Apple (fruit)": [fruit]})
    ]
    split = _exported(cli, work)
    names = {e["name"]: e for e in split["entities"]}
    assert names["Apple (fruit)"]["source_ids"] == [fruit]
    assert cli("check", "--workdir", work, env=ENV).code == 0

    assert cli("unsplit", sid, "--workdir", work, env=ENV).code == 0
    after = _exported(cli, work)
    assert after["entities"] == before["entities"] and after["curation"]["splits"] == []


def test_refused_splits_exit_2(cli, tmp_path):
    (tmp_path / "a.txt").write_text(DOC_A, encoding="utf-8")
    work = tmp_path / "idx"
    assert cli("index", "--no-progress", "--workdir", work, "a.txt", env=ENV).code == 0
    assert cli("split", "London", "--part", "Town=nochunk", "--workdir", work, env=ENV).code == 2
    assert cli("split", "London", "--part", "no-equals", "--workdir", work, env=ENV).code == 2
    assert cli("split", "Nobody", "--part", "X=c1", "--workdir", work, env=ENV).code == 2
    assert cli("unsplit", "s-0000", "--workdir", work, env=ENV).code == 2
    assert cli("check", "--workdir", work, env=ENV).code == 0
