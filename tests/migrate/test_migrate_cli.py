"""``kgrag migrate`` on SQLite working directories: no model call, same answers, refusals."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from kgrag.cli.main import main
from kgrag.cli.migrate_cmd import Spec, parse_spec
from kgrag.errors import ConfigError
from kgrag.storage.sqlite import SQLiteStorage
from tests.indexing.lifecycle_corpus import lifecycle_settings

from .helpers import answer, build_index, model_calls, sqlite_export


def test_the_command_copies_without_a_model_call_and_the_copy_answers_alike(
    tmp_path, monkeypatch, capsys
):
    source = build_index(tmp_path / "source", tmp_path / "docs")  # queries write its cost ledger
    target = tmp_path / "copy"
    argv = ["migrate", "--from", f"sqlite:{source}", "--to", f"sqlite:{target}"]
    with model_calls(monkeypatch) as calls:
        assert main([*argv, "--verify", "--json", "--batch-size", "3"]) == 0
        assert main(argv) == 0
    assert not calls
    out, again = capsys.readouterr().out.splitlines()[:2]
    report = json.loads(out)
    assert report["ok"] and report["exports_equal"] and report["batches"] > 0
    assert not report["mismatches"] and report["target_counts"] == report["source_counts"]
    assert again.startswith("already migrated")
    assert sqlite_export(target) == sqlite_export(source)
    with model_calls(monkeypatch) as calls:
        ours = answer(lifecycle_settings(source))
    assert calls["chat"] > 0  # the counter does see model calls
    assert answer(lifecycle_settings(target)) == ours and ours[1]
    assert main(argv) == 1  # the query wrote to the source: the copy is out of date
    assert "changed since it was copied" in capsys.readouterr().err


def test_the_command_refuses_what_it_cannot_copy(source_index, tmp_path, capsys):
    def run(src: str, dst: str) -> tuple[int, str]:
        status = main(["migrate", "--from", src, "--to", dst])
        return status, capsys.readouterr().err

    status, err = run(f"sqlite:{tmp_path / 'nothing'}", f"sqlite:{tmp_path / 'copy'}")
    assert status == 2 and "no index at" in err
    status, err = run(f"sqlite:{source_index}", f"sqlite:{source_index}")
    assert status == 2 and "the same index" in err
    status, err = run(f"mysql:{source_index}", f"sqlite:{tmp_path / 'copy'}")
    assert status == 2 and "names no store" in err
    status, err = run(f"sqlite:{_store(tmp_path / 'empty')}", f"sqlite:{tmp_path / 'copy'}")
    assert status == 2 and "holds no index" in err


def _store(workdir: Path, *notes: str) -> Path:
    """A SQLite working directory holding nothing but ``notes`` (keys of one namespace)."""

    async def create() -> None:
        async with SQLiteStorage(workdir) as storage:
            await storage.kv("notes").upsert({n: {} for n in notes})

    asyncio.run(create())
    return workdir


def test_a_foreign_target_is_refused_unless_overwritten(source_index, tmp_path, capsys):
    target = _store(tmp_path / "copy", "mine")
    argv = ["migrate", "--from", f"sqlite:{source_index}", "--to", f"sqlite:{target}"]
    assert main(argv) == 2
    assert "already holds an index" in capsys.readouterr().err
    assert main([*argv, "--overwrite", "--verify"]) == 0
    assert "canonical exports equal" in capsys.readouterr().out
    assert sqlite_export(target) == sqlite_export(source_index)


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("sqlite:/data/idx", Spec("sqlite", "/data/idx")),
        ("sqlite:rel/idx", Spec("sqlite", "rel/idx")),
        ("postgres:host=/tmp dbname=kg", Spec("postgres", "host=/tmp dbname=kg")),
        ("postgres:host=/tmp dbname=kg#docs_2", Spec("postgres", "host=/tmp dbname=kg", "docs_2")),
        ("postgres:postgresql://u@h/db#ws", Spec("postgres", "postgresql://u@h/db", "ws")),
        ("postgresql://u@h:5432/db", Spec("postgres", "postgresql://u@h:5432/db")),
        ("postgres://u@h/db#ws", Spec("postgres", "postgres://u@h/db", "ws")),
        ("postgres:password=a#B dbname=kg", Spec("postgres", "password=a#B dbname=kg")),
    ],
)
def test_store_names(text, spec):
    assert parse_spec(text) == spec


@pytest.mark.parametrize("text", ["idx", "sqlite:", "mysql:x", "postgres:"])
def test_names_of_no_store_are_refused(text):
    with pytest.raises(ConfigError, match="names no store"):
        parse_spec(text)
