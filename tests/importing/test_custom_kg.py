"""``kgrag import --kg``: a user-built graph becomes a document's facts."""

from __future__ import annotations

import json

import pytest

from kgrag.api.facade import KGRag
from kgrag.maintenance.importing.model import ImportFormatError
from kgrag.types import SEP

from .helpers import chat_calls, settings

KG = {
    "chunks": [
        {"content": "Acme Corp makes rockets in Springfield.", "source_id": "c1"},
        {"content": "Wile E. Coyote buys rockets from Acme Corp.", "source_id": "c2"},
    ],
    "entities": [
        {
            "entity_name": "Acme Corp",
            "entity_type": "organization",
            "description": "A maker of rockets.",
            "source_id": "c1",
        },
        {
            "entity_name": "Acme Corp",
            "entity_type": "organization",
            "description": "Sells to Wile E. Coyote.",
            "source_id": "c2",
        },
        {"entity_name": "Wile E. Coyote", "entity_type": "person", "source_id": "c2"},
        {
            "entity_name": "Springfield",
            "entity_type": "location",
            "description": "A town.",
            "source_id": "nowhere",
        },
    ],
    "relationships": [
        {
            "src_id": "Wile E. Coyote",
            "tgt_id": "Acme Corp",
            "description": "buys rockets from",
            "keywords": "customer, rockets",
            "weight": 2.5,
            "source_id": "c2",
        },
        {"src_id": "Acme Corp", "tgt_id": "Springfield", "description": "is based in"},
    ],
}


def _write(tmp_path, data, name="graph.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _by_name(export):
    return {e["name"]: e for e in export["entities"]}


async def test_imported_graph_is_a_document_check_passes_and_export_shows_it(tmp_path):
    path = _write(tmp_path, KG)
    async with KGRag(settings(tmp_path / "idx")) as rag:
        report = await rag.import_graph(path, source="kg")
        assert (await rag.check()).ok
        assert chat_calls(rag) == 0  # nothing extracted, nothing summarised
        export = await rag.export(timestamps=False)
    assert len(report.documents) == 1 and report.entities == 3 and report.relations == 2
    nodes = _by_name(export)
    assert set(nodes) == {"Acme Corp", "Wile E. Coyote", "Springfield"}
    assert nodes["Acme Corp"]["description"].split(SEP) == [
        "A maker of rockets.",
        "Sells to Wile E. Coyote.",
    ]
    assert nodes["Acme Corp"]["entity_type"] == "organization"
    assert len(nodes["Acme Corp"]["source_ids"]) == 2
    edges = {(r["src"], r["tgt"]): r for r in export["relations"]}
    assert edges[("Acme Corp", "Wile E. Coyote")]["weight"] == 2.5
    assert edges[("Acme Corp", "Wile E. Coyote")]["directions"] == [["Wile E. Coyote", "Acme Corp"]]
    # Rows naming no given chunk live in one synthetic chunk per source id, with their text.
    texts = sorted(c["content"] for c in export["chunks"])
    assert len(texts) == 4
    assert any(t.startswith("[nowhere]") and "Springfield: A town." in t for t in texts)
    assert any(t.startswith("[UNKNOWN]") and "Acme Corp - Springfield" in t for t in texts)
    assert export["documents"][0]["source"] == "kg:" + str(path.resolve())


async def test_importing_twice_gives_the_same_graph_and_delete_removes_it(tmp_path):
    path = _write(tmp_path, KG)
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await rag.import_graph(path, source="kg")
        first = await rag.export(timestamps=False)
        report = await rag.import_graph(path, source="kg")
        assert await rag.export(timestamps=False) == first
        assert report.vectors_embedded == 0  # unchanged: every vector kept
        await rag.delete(report.documents)
        assert (await rag.check()).ok
        empty = await rag.export(timestamps=False)
    assert empty["entities"] == [] and empty["relations"] == [] and empty["chunks"] == []


async def test_reimport_with_other_rows_replaces_them(tmp_path):
    path = _write(tmp_path, KG)
    changed = json.loads(json.dumps(KG))
    changed["entities"] = [e for e in changed["entities"] if e["entity_name"] != "Wile E. Coyote"]
    changed["entities"][0]["description"] = "Makes anvils too."
    changed["relationships"] = []
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await rag.import_graph(path, source="kg")
        _write(tmp_path, changed)
        await rag.import_graph(path, source="kg")
        assert (await rag.check()).ok
        nodes = _by_name(await rag.export(timestamps=False))
    assert set(nodes) == {"Acme Corp", "Springfield"}
    assert nodes["Acme Corp"]["description"].split(SEP)[0] == "Makes anvils too."


async def test_rebuild_keeps_the_imported_chunks_and_extracts_nothing(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await rag.import_graph(KG, source="kg", name="toons")
        before = await rag.export(timestamps=False)
        await rag.rebuild()
        assert chat_calls(rag) == 0
        assert (await rag.check()).ok
        assert await rag.export(timestamps=False) == before


async def test_imported_graph_lives_beside_indexed_documents(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await rag.insert("Marley was dead. Scrooge knew he was dead.")
        await rag.import_graph(KG, source="kg", name="toons")
        assert (await rag.check()).ok
        names = set(_by_name(await rag.export()))
    assert {"Acme Corp", "Scrooge"} <= names


@pytest.mark.parametrize(
    "bad, says",
    [
        ([1, 2], "JSON object"),
        ({"entities": [{"entity_type": "x"}]}, "entity_name"),
        ({"relationships": [{"src_id": "a", "tgt_id": "a"}]}, "two different"),
        ({"relationships": [{"src_id": "a", "tgt_id": "b", "weight": "heavy"}]}, "weight"),
        ({"chunks": "text"}, "list of objects"),
        ({}, "no chunks"),
    ],
)
async def test_malformed_graphs_are_refused_and_nothing_is_written(tmp_path, bad, says):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        with pytest.raises(ImportFormatError, match=says):
            await rag.import_graph(bad, source="kg")
        assert (await rag.documents())["total"] == 0


def test_cli_imports_a_user_built_graph(tmp_path, monkeypatch, capsys):
    from kgrag.cli.main import main

    monkeypatch.setenv("KGRAG_LLM_PROVIDER", "fake")
    monkeypatch.setenv("KGRAG_EMBEDDING_PROVIDER", "fake")
    path = _write(tmp_path, KG)
    workdir = str(tmp_path / "cli")
    assert main(["import", "--workdir", workdir, "--kg", str(path)]) == 0
    assert "3 entities, 2 relations" in capsys.readouterr().out
    assert main(["check", "--workdir", workdir]) == 0
    bad = _write(tmp_path, {"entities": [{}]}, "bad.json")
    assert main(["import", "--workdir", workdir, "--kg", str(bad)]) == 1
    assert "entity_name" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:  # --from or --kg is required
        main(["import", "--workdir", workdir, str(path)])
    assert usage.value.code == 2
