"""The summary lines of ``kgrag index`` and ``kgrag retry`` say what the run did.

A ``--replace`` file is replaced (not new), an unchanged file given new
``--meta`` has its metadata updated (not unchanged), a failed document
indexed again says so, and a retry says it retried, and whether anything
was extracted again.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from kgrag.storage.sqlite import SQLiteStorage
from kgrag.types import DocStatus
from tests.cli.clean_cli import DEAD_LLM, FAKE, CleanCLI, last_json_line

STORY = "Scrooge met Marley in London. Marley was dead. Bob Cratchit worked for Scrooge."


@pytest.fixture
def cli(monkeypatch, capsys, tmp_path) -> CleanCLI:
    return CleanCLI(monkeypatch, capsys, tmp_path)


@pytest.fixture
def story(tmp_path):
    (tmp_path / "old.txt").write_text(STORY)
    (tmp_path / "new.txt").write_text(STORY + " Fred invited Scrooge to dinner.")
    return tmp_path


def index(cli: CleanCLI, *args: object, env: dict[str, str] = FAKE):
    out = cli("index", "--no-progress", "--workdir", "idx", *args, env=env)
    return out, out.out.splitlines()


def test_replace_says_replaced(cli, story):
    assert index(cli, story / "old.txt")[0].code == 0
    out, lines = index(cli, "--replace", story / "old.txt", story / "new.txt")
    assert out.code == 0, out.err
    assert lines[0] == "1 replaced"
    assert lines[-1].startswith("indexed 1 document(s)")
    summary = last_json_line(index(cli, "--json", story / "new.txt")[0].out)
    assert (summary["unchanged"], summary["new"], summary["replaced"]) == (1, 0, 0)


def test_new_metadata_on_an_unchanged_file_says_metadata_updated(cli, story):
    assert index(cli, story / "old.txt")[0].code == 0
    out, lines = index(cli, "--meta", "team=ops", story / "old.txt")
    assert out.code == 0, out.err
    assert lines[0] == "1 metadata updated"
    listing = json.loads(cli("docs", "--json", "--workdir", "idx").out)
    assert [d["metadata"] for d in listing["documents"]] == [{"team": "ops"}]
    out, lines = index(cli, "--meta", "team=ops", story / "old.txt")  # the same again
    assert out.code == 0 and lines[0] == "1 unchanged"


def test_a_failed_document_indexed_again_says_so(cli, story):
    failed, _ = index(cli, story / "old.txt", env=DEAD_LLM)
    assert failed.code == 1
    out, lines = index(cli, story / "old.txt")
    assert out.code == 0, out.err
    assert lines[0] == "1 failed before, indexed again"


def test_retry_says_retried_and_that_nothing_was_extracted_again(cli, story, tmp_path):
    assert index(cli, story / "old.txt")[0].code == 0
    asyncio.run(_warn_every_document(tmp_path / "idx"))
    out = cli("retry", "--no-progress", "--workdir", "idx", env=FAKE)
    assert out.code == 0, out.err
    last = out.out.splitlines()[-1]
    assert last.startswith("retried 1 document(s)")
    assert "no chunk needed extracting" in last and "0 LLM calls" in last
    out = cli("retry", "--no-progress", "--workdir", "idx", env=FAKE)
    assert out.out.splitlines()[-1].startswith("retried nothing: no document had failed")


def test_retry_of_a_failed_document_counts_its_work(cli, story):
    assert index(cli, story / "old.txt", env=DEAD_LLM)[0].code == 1
    out = cli("retry", "--no-progress", "--workdir", "idx", env=FAKE)
    assert out.code == 0, out.err
    assert out.out.splitlines()[-1].startswith("retried 1 document(s)")
    assert "chunks extracted 1/1" in out.out


async def _warn_every_document(workdir) -> None:
    """Give every document a chunk warning, as a partly malformed reply leaves one."""
    async with SQLiteStorage(workdir) as storage:
        records = await storage.doc_status.by_status(*DocStatus)
        for record in records:
            record.warnings = [f"{record.chunk_ids[0]}: malformed record skipped"]
        await storage.doc_status.upsert(records)
