"""End-to-end indexing with the built-in fake models (no HTTP)."""

from __future__ import annotations

import dataclasses

from kgrag.api.facade import KGRag
from kgrag.cli.index_cmd import chat_totals
from kgrag.types import DocStatus
from tests.support.settings import fake_settings

from .corpus import BOOK, write_book_parts


async def test_whole_book_indexes_into_a_merged_graph(tmp_path):
    async with KGRag(fake_settings(tmp_path / "idx")) as rag:
        report = await rag.index_paths([BOOK])
        assert report.ok and len(report.processed) == 1
        status = await rag.status()
        graph = status["graph"]
        assert graph["chunks"] >= 30  # ~190 KB at 1,200 tokens a chunk
        assert graph["entities"] > 100 and graph["relations"] > 100
        assert graph["built_by"] == ["llm"]
        scrooge = await rag.storage.graph.get_node("Scrooge")
        # Scrooge appears in nearly every chunk: merged from many fragments.
        assert len(scrooge["source_ids"]) >= 20
        assert scrooge["entity_type"]
        calls = chat_totals(rag.models.ledger.snapshot())["calls"]
        # one extraction + one gleaning call per chunk, plus summaries
        assert calls >= 2 * graph["chunks"]


async def test_a_copy_is_its_own_document_and_costs_no_extraction(tmp_path):
    paths = write_book_parts(tmp_path / "docs", 2, chars=3000)
    async with KGRag(fake_settings(tmp_path / "idx")) as rag:
        report = await rag.index_paths(paths)
        assert len(report.processed) == 2
        calls = rag.models.ledger.snapshot()["extract"]["calls"]
        copy = tmp_path / "docs" / "copy.txt"
        copy.write_text(paths[0].read_text())
        report = await rag.index_paths([copy])
        assert report.new and report.processed == report.new
        assert rag.models.ledger.snapshot()["extract"]["calls"] == calls  # chunks are shared
        node = (await rag.export(timestamps=False))["entities"][0]
        again = await rag.index_paths([tmp_path / "docs"])
        assert again.documents == 0 and again.processed == [] and len(again.unchanged) == 3
        assert again.duplicates == []
        assert (await rag.export(timestamps=False))["entities"][0] == node


async def test_reprocessing_a_document_costs_no_llm_calls(tmp_path):
    paths = write_book_parts(tmp_path / "docs", 1, chars=8000)
    async with KGRag(fake_settings(tmp_path / "idx")) as rag:
        await rag.index_paths(paths)
        first = chat_totals(rag.models.ledger.snapshot())
        assert first["calls"] > 0
        [record] = await rag.storage.doc_status.by_status(DocStatus.PROCESSED)
        await rag.storage.doc_status.upsert([dataclasses.replace(record, status=DocStatus.FAILED)])
        report = await rag.retry_failed()
        assert report.processed == [record.id]
        second = chat_totals(rag.models.ledger.snapshot())
        # the stored extractions and summaries are reused: no call, not even a cache hit
        assert second["calls"] == first["calls"]


async def test_unreadable_file_is_reported_and_the_batch_goes_on(tmp_path):
    docs = tmp_path / "docs"
    write_book_parts(docs, 1, chars=2000)
    (docs / "image.bin").write_bytes(b"\x00\x01\x02")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    async with KGRag(fake_settings(tmp_path / "idx")) as rag:
        report = await rag.index_paths([docs])
        assert len(report.processed) == 1
        joined = "\n".join(report.load_errors)
        assert "image.bin" in joined and "broken.pdf" in joined
        assert ".txt" in joined  # the error names the supported types
