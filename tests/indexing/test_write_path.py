"""Every write of the Python API goes through the one write path (IndexingService).

The service tells each call to its watchers (``kgrag.indexing.service.watch``);
these tests make real writes and read what the service saw: no mocks.
The refused inputs are one record: ``kgrag status`` and the server's
listing read the same rows, and an index written the old way (a meta
``rejected_inputs``, ``server_refused`` rows without a path) keeps them.
"""

from __future__ import annotations

from pathlib import Path

from kgrag.api.facade import KGRag
from kgrag.indexing import rejected
from kgrag.indexing.service import watch
from kgrag.storage.layout import REJECTED_META, SERVER_REFUSED

from .lifecycle_corpus import document, lifecycle_settings, write


def kinds(runs: list) -> list[str]:
    return [r.kind for r in runs]


async def test_each_write_of_the_api_goes_through_the_service(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "a.txt", document([0, 1]))
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        with watch() as runs:
            report = await rag.index_paths([docs])
            [note] = (await rag.insert(document([2]), ids="note")).processed
            await rag.set_disabled(["note"])
            await rag.retry_failed()
            entity = (await rag.export(timestamps=False))["entities"][0]
            await rag.edit_entity(entity["name"], description="edited by hand")
            [exported] = await rag.export_to(tmp_path / "graph.json")
            await rag.rebuild()
            await rag.check(repair=True)
            await rag.delete(["note"])
        assert kinds(runs) == [
            "index",
            "index",
            "disable",
            "retry",
            "curate",
            "rebuild",
            "repair",
            "delete",
        ]
        assert runs[0].documents == tuple(report.processed)
        assert runs[1].documents == (note,) and runs[2].documents == (note,)
        assert runs[-1].documents == (note,)
    async with KGRag(lifecycle_settings(tmp_path / "copy")) as copy:
        with watch() as runs:
            await copy.import_graph(exported)
        assert kinds(runs) == ["import"]


async def test_a_refused_file_is_one_record_read_by_status_and_the_listing(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "a.txt", document([0]))
    bad = docs / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4 not really")
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        with watch() as runs:
            await rag.index_paths([docs])
        [refusal] = await rejected.all_refusals(rag.storage)
        assert runs[0].refused == (refusal.doc_id,)
        status = (await rag.status())["rejected_inputs"]
        assert status == {str(bad.resolve()): refusal.reason}
        [listed] = await rejected.as_records(rag.storage)  # what the server lists as failed
        assert listed.id == refusal.doc_id and listed.status.value == "failed"
        assert listed.file_path == str(bad.resolve()) and listed.error == refusal.reason
        assert await rag.storage.get_meta(REJECTED_META) is None  # no second record
        bad.write_text(document([3]), encoding="utf-8")
        bad.rename(docs / "fixed.txt")
        await rag.index_paths([docs])  # the refused file is gone: forgotten by both
        assert (await rag.status())["rejected_inputs"] == {}
        assert await rejected.as_records(rag.storage) == []


async def test_an_index_written_the_old_way_keeps_its_refusals(tmp_path: Path) -> None:
    """Old indexes: the loader's refusals in meta ``rejected_inputs``, the server's in rows."""
    docs = tmp_path / "docs"
    write(docs, "a.txt", document([0]))
    bad = docs / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4 not really")
    old_row = {  # as the server wrote it: no path, a fresh id
        "doc_id": "refused-0123456789abcdef",
        "file_path": "huge.bin",
        "reason": "unsupported file type '.bin'",
        "track_id": "upload_20250101_000000_abcd1234",
        "created_at": 1700000000.0,
    }
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        await rag.index_paths([docs / "a.txt"])
        async with rag.writing(), rag.storage.transaction():
            await rag.storage.set_meta(REJECTED_META, {str(bad): "the file contains no text"})
            await rag.storage.kv(SERVER_REFUSED).upsert({old_row["doc_id"]: old_row})
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        status = (await rag.status())["rejected_inputs"]
        assert status == {str(bad): "the file contains no text"}
        listed = {r.file_path: r.error for r in await rejected.as_records(rag.storage)}
        assert listed == {"huge.bin": old_row["reason"], str(bad): "the file contains no text"}
        await rag.index_paths([docs / "a.txt"])  # the next write folds the meta into the rows
        assert await rag.storage.get_meta(REJECTED_META) == {}
        assert await rag.storage.kv(SERVER_REFUSED).get(old_row["doc_id"]) == old_row
        assert (await rag.status())["rejected_inputs"] == status
        listed_after = {r.file_path: r.error for r in await rejected.as_records(rag.storage)}
        assert listed_after == listed
