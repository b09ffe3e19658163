"""``kgrag dedupe`` on a real index: dry run writes nothing, apply merges, unmerge undoes, auto."""

from __future__ import annotations

import json
from functools import partial

from kgrag.api.facade import KGRag
from kgrag.cli.main import main
from tests.support.settings import fake_settings

DOCS = {
    "a": "Ebenezer Scrooge met Bob Cratchit in London. Ebenezer Scrooge kept a counting-house.",
    "b": "Scrooge paid Bob Cratchit in London. Scrooge counted coins in the counting-house.",
}


settings = partial(fake_settings, max_gleaning=0)


async def build(rag):
    ids = sorted(DOCS)
    assert (await rag.insert([DOCS[i] for i in ids], file_paths=ids, ids=ids)).ok


async def names(rag):
    return set(await rag.storage.graph.all_node_names())


async def test_dry_run_then_apply_then_unmerge(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await build(rag)
        before = await rag.export(timestamps=False)
        report = await rag.resolve_entities()
        assert any(set(g.names) == {"Ebenezer Scrooge", "Scrooge"} for g in report.groups)
        assert await rag.export(timestamps=False) == before  # a dry run writes nothing
        applied = await rag.resolve_entities(apply=True)
        assert applied.merges and "Scrooge" not in await names(rag)
        assert (await rag.check()).ok
        merges = await rag.merges()
        assert merges[0]["origin"] == "dedupe" and merges[0]["evidence"]["links"]
        await build(rag)  # re-indexing the same files keeps the merge
        assert "Scrooge" not in await names(rag) and (await rag.check()).ok
        for merge_id in applied.merges:
            await rag.unmerge(merge_id)
        assert {"Ebenezer Scrooge", "Scrooge"} <= await names(rag)
        assert (await rag.check()).ok


async def test_auto_resolve_merges_at_the_end_of_an_index_run(tmp_path):
    async with KGRag(settings(tmp_path / "idx", resolve="auto", resolve_auto_min_score=0.6)) as rag:
        await build(rag)
        assert "Scrooge" not in await names(rag)
        assert [m["origin"] for m in await rag.merges()] == ["dedupe"]
    async with KGRag(settings(tmp_path / "off")) as rag:  # off by default
        await build(rag)
        assert "Scrooge" in await names(rag) and await rag.merges() == []


def test_cli_dry_run_report_and_apply(tmp_path, monkeypatch, capsys):
    workdir = tmp_path / "idx"
    made = settings(workdir)
    for key in ("llm_provider", "extractor"):
        monkeypatch.setenv(f"KGRAG_{key.upper()}", str(made.value(key)))
    monkeypatch.setenv("KGRAG_EMBEDDING_PROVIDER", "fake")
    monkeypatch.setenv("KGRAG_MAX_GLEANING", "0")
    for name, text in DOCS.items():
        (tmp_path / f"{name}.txt").write_text(text)
    assert (
        main(
            [
                "index",
                "--workdir",
                str(workdir),
                "--no-progress",
                str(tmp_path / "a.txt"),
                str(tmp_path / "b.txt"),
            ]
        )
        == 0
    )
    capsys.readouterr()
    out = tmp_path / "report.json"
    assert main(["dedupe", "--workdir", str(workdir), "--report", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Scrooge" in text and "score" in text
    data = json.loads(out.read_text())
    assert data["groups"] and not data["merges"]
    assert "Scrooge" in (tmp_path / "report.json.txt").read_text()
    assert main(["dedupe", "--workdir", str(workdir), "--apply", "--json"]) == 0
    merged = json.loads(capsys.readouterr().out)["merges"]
    assert merged
    assert main(["unmerge", "--workdir", str(workdir), merged[0]]) == 0
    assert main(["dedupe", "--workdir", str(workdir), "--min-score", "2"]) == 2
