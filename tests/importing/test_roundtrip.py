"""``kgrag import --from kgrag``: an export read back gives the same index."""

from __future__ import annotations

import asyncio
import json

import pytest

from kgrag.api.facade import KGRag
from kgrag.cli.main import main
from kgrag.maintenance.export import dumps
from kgrag.maintenance.importing.model import ImportFormatError

from .helpers import LIGHTRAG_DOCS, chat_calls, extraction_calls, settings


async def _indexed(tmp_path):
    """An index of the three passages plus a raw text, with summaries (3+ fragments)."""
    async with KGRag(settings(tmp_path / "src")) as rag:
        await rag.index_paths([LIGHTRAG_DOCS], metadata={"shelf": "dickens"})
        await rag.insert(
            "Scrooge and Marley were partners. Scrooge signed the register. "
            "Marley was dead. Bob Cratchit was the clerk of Scrooge."
        )
        export = await rag.export(timestamps=False)
    assert any(e.get("fragments_digest") for e in export["entities"])  # something was summarised
    return export


async def test_export_imports_into_an_empty_workdir_and_exports_the_same(tmp_path):
    export = await _indexed(tmp_path)
    path = tmp_path / "export.json"
    path.write_text(dumps(export), encoding="utf-8")
    async with KGRag(settings(tmp_path / "dst")) as rag:
        report = await rag.import_graph(path, source="kgrag")
        assert chat_calls(rag) == 0  # the export's summaries are kept, nothing extracted
        assert (await rag.check()).ok
        again = await rag.export(timestamps=False)
    assert dumps(again) == dumps(export)
    assert len(report.documents) == len(export["documents"])


async def test_reindexing_the_files_after_the_round_trip_costs_nothing(tmp_path):
    export = await _indexed(tmp_path)
    path = tmp_path / "export.json"
    path.write_text(dumps(export), encoding="utf-8")
    async with KGRag(settings(tmp_path / "dst")) as rag:
        await rag.import_graph(path, source="kgrag")
        report = await rag.index_paths([LIGHTRAG_DOCS], metadata={"shelf": "dickens"})
        assert chat_calls(rag) == 0
        assert report.processed == []  # same sources, same content: unchanged
        await rag.rebuild()  # summaries are made again (the new index's cache is empty) ...
        assert extraction_calls(rag) == 0  # ... but no chunk is extracted again
        assert (await rag.check()).ok


def test_cli_round_trip(tmp_path, monkeypatch, capsys):
    export = asyncio.run(_indexed(tmp_path))
    path = tmp_path / "export.json"
    path.write_text(dumps(export), encoding="utf-8")
    for key, value in {"KGRAG_LLM_PROVIDER": "fake", "KGRAG_EMBEDDING_PROVIDER": "fake"}.items():
        monkeypatch.setenv(key, value)
    for key, value in {"KGRAG_FORCE_LLM_SUMMARY_ON_MERGE": "3", "KGRAG_MAX_GLEANING": "0"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("KGRAG_EXTRACTOR", "llm")
    dst = str(tmp_path / "cli")
    assert main(["import", "--workdir", dst, "--from", "kgrag", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["documents"] == len(export["documents"])
    again = tmp_path / "again.json"
    assert main(["export", "--workdir", dst, "--output", str(again), "--no-timestamps"]) == 0
    assert again.read_text(encoding="utf-8") == dumps(export)
    assert main(["import", "--workdir", dst, "--from", "kgrag", str(tmp_path / "none.json")]) == 1


async def test_an_old_export_without_chunk_texts_is_refused(tmp_path):
    export = await _indexed(tmp_path)
    for chunk in export["chunks"]:
        chunk.pop("content")
    async with KGRag(settings(tmp_path / "dst")) as rag:
        with pytest.raises(ImportFormatError, match="no text or facts"):
            await rag.import_graph(_write(tmp_path, export), source="kgrag")
        with pytest.raises(ImportFormatError, match="not a kgrag export"):
            await rag.import_graph(_write(tmp_path, {"entities": []}), source="kgrag")


def _write(tmp_path, data):
    path = tmp_path / "in.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


async def _curated(tmp_path):
    """The indexed passages with every kind of curation record, and its export."""
    async with KGRag(settings(tmp_path / "cur")) as rag:
        await rag.index_paths([LIGHTRAG_DOCS])
        await rag.insert(
            "Scrooge and Marley were partners. Scrooge signed the register. "
            "Marley was dead. Bob Cratchit was the clerk of Scrooge."
        )
        await rag.merge_entities("Ebenezer Scrooge", ["Scrooge"], evidence={"score": 0.9})
        await rag.merge_entities("Jacob Marley", ["Marley"])
        await rag.rename_entity("Tiny Tim", "Tim")
        await rag.edit_entity("Fezziwig", description="A kind old merchant.", entity_type="Person")
        await rag.edit_relation("Bob Cratchit", "Tim Cratchit", weight=4)
        await rag.create_entity("Mrs Fezziwig", "Person", "Fezziwig's wife.")
        await rag.create_relation("Mrs Fezziwig", "Fezziwig", keywords="married")
        await rag.delete_entity("Bah")
        await rag.delete_relation("Christmas Past", "Ghost")
        assert (await rag.check()).ok
        export = await rag.export(timestamps=False)
    block = export["curation"]
    assert len(block["merges"]) == 3 and block["edits"]
    return export


async def test_curation_records_round_trip_byte_for_byte(tmp_path):
    export = await _curated(tmp_path)
    path = _write(tmp_path, export)
    async with KGRag(settings(tmp_path / "dst")) as rag:
        await rag.import_graph(path, source="kgrag")
        assert chat_calls(rag) == 0  # merged and manual keys keep their summaries too
        assert (await rag.check()).ok
        assert dumps(await rag.export(timestamps=False)) == dumps(export)
        await rag.import_graph(path, source="kgrag")  # again: the same records, the same graph
        assert dumps(await rag.export(timestamps=False)) == dumps(export)
        await rag.index_paths([LIGHTRAG_DOCS])  # the records hold for re-indexed files
        assert (await rag.check()).ok
        await rag.rebuild()
        assert dumps(await rag.export(timestamps=False)) == dumps(export)


async def test_conflicting_curation_records_are_refused_whole(tmp_path):
    export = await _curated(tmp_path)
    async with KGRag(settings(tmp_path / "dst")) as rag:
        await rag.index_paths([LIGHTRAG_DOCS])
        await rag.merge_entities("Scrooge", ["Ebenezer Scrooge"])
        before = dumps(await rag.export(timestamps=False))
        with pytest.raises(ImportFormatError, match="Ebenezer Scrooge"):
            await rag.import_graph(_write(tmp_path, export), source="kgrag")
        assert dumps(await rag.export(timestamps=False)) == before
