"""End to end: real files indexed, a question about a firmware version the sources never describe.

Firmware v1 of FW-A has TLS; v2 is described nowhere. Asked about TLS on
v2, the answer says what is missing, the coverage shows it, and the v1
chunk is dropped as conflicting (kept, and labelled, on request).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgrag import KGRag
from tests.api.helpers import settings
from tests.cli.clean_cli import FAKE, CleanCLI

DOCS = {
    "fw-a-v1.md": "# FW-A firmware v1\n\nFirmware v1 of the FW-A firewall sends alerts over TLS "
    "to the Log Platform. The TLS output of FW-A needs License L.\n",
    "fw-a.md": "# FW-A\n\nThe FW-A firewall is built by Acme Networks. Acme Networks sells the "
    "FW-A firewall in Europe.\n",
    "cafeteria.md": "# Cafeteria\n\nThe Cafeteria serves soup on Fridays.\n",
}
Q = "Does firmware v2 of FW-A support TLS?"
NOTE = "The sources describe TLS for firmware v1 only, not for firmware v2."


@pytest.fixture
async def workdir(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    async with KGRag(settings(tmp_path / "idx")) as rag:
        report = await rag.index_paths([docs])
        assert report.ok
    return tmp_path / "idx"


def v1_chunks(data):
    return [c for c in data["chunks"] if Path(c["file_path"]).name == "fw-a-v1.md"]


async def test_the_extractive_answer_says_what_is_missing(workdir):
    async with KGRag(settings(workdir, llm_provider="none")) as rag:
        result = await rag.query(Q)
        data = await rag.query_data(Q, trace=True)
    assert result.extractive and result.answer.startswith(NOTE)
    status = {e["constraint"]["value"]: e["status"] for e in result.coverage}
    assert status["v2"] == "missing"
    assert status["FW-A"] == status["TLS"] == "conflicting-only"
    assert v1_chunks(data) == [] and data["conditions"]["note"] == NOTE
    (dropped,) = [
        d for d in data["trace"]["dropped"] if d["stage"] == "conditions" and d["kind"] == "chunk"
    ]
    assert Path(dropped["file"]).name == "fw-a-v1.md"
    assert dropped["reason"] == "names firmware v1, not firmware v2"


async def test_the_chat_model_is_told_in_its_prompt(workdir):
    async with KGRag(settings(workdir)) as rag:
        prompt = (await rag.query(Q, rag.query_param(only_need_prompt=True))).prompt
        answer = await rag.query(Q)
    assert f"Not covered by the sources: {NOTE}" in prompt and "say so plainly" in prompt
    assert "sends alerts over TLS" not in prompt  # the v1 chunk and its facts are gone
    assert not answer.extractive and answer.coverage[0]["status"] == "missing"


async def test_keep_conflicting_keeps_and_labels_the_v1_chunk(workdir):
    async with KGRag(settings(workdir, llm_provider="none")) as rag:
        data = await rag.query_data(Q, rag.query_param(keep_conflicting=True), trace=True)
        context = (await rag.query(Q, rag.query_param(keep_conflicting=True))).context
    (chunk,) = v1_chunks(data)
    assert data["conditions"]["dropped"] == []
    labelled = context.split("kept only for comparison")[1].split("Not covered")[0]
    assert f"[{chunk['reference_id']}]" in labelled and "names firmware v1" in labelled
    assert NOTE in context


def test_the_command_line_flags(workdir, monkeypatch, capsys):
    cli = CleanCLI(monkeypatch, capsys, workdir.parent)
    plain = cli("query", "--workdir", workdir, "--json", Q, env=FAKE)
    assert plain.code == 0, plain.err
    row = json.loads(plain.out)
    assert row["coverage"][0]["constraint"]["value"] == "v2"
    kept = cli("query", "--workdir", workdir, "--data-only", "--keep-conflicting", Q, env=FAKE)
    assert v1_chunks(json.loads(kept.out))
    off = cli("query", "--workdir", workdir, "--data-only", "--conditions", "off", Q, env=FAKE)
    assert json.loads(off.out)["conditions"]["constraints"] == []
    assert v1_chunks(json.loads(off.out))
