"""Supersede, move, replace, delete and rebuild end in the graph a fresh index builds."""

from __future__ import annotations

import numpy as np
import pytest

from kgrag.api.facade import KGRag
from kgrag.errors import DocumentNotFoundError
from kgrag.indexing.documents import all_records
from kgrag.maintenance.export import dumps
from kgrag.retrieval.filter.documents import named_documents

from .export_ids import by_source, ids_by_source
from .lifecycle_corpus import document, lifecycle_settings, write


async def fresh_export(tmp_path, paths, name="fresh", **extra) -> str:
    async with KGRag(lifecycle_settings(tmp_path / name, **extra)) as rag:
        report = await rag.index_paths(paths)
        assert report.ok
        return dumps(await rag.export(timestamps=False))


def calls(rag: KGRag, role: str) -> int:
    return rag.models.ledger.snapshot().get(role, {}).get("calls", 0)


async def assert_sound(rag: KGRag) -> None:
    report = await rag.check()
    assert report.ok, report.problems


async def test_an_edited_file_supersedes_its_old_version(tmp_path):
    docs = tmp_path / "docs"
    a = write(docs, "a.txt", document([0, 1, 2, 3]))
    b = write(docs, "b.txt", document([3, 4, 5]))
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        await rag.index_paths([a, b])
        before = calls(rag, "extract")
        write(docs, "a.txt", document([0, 1, 2, 3], version=1, edited={1}))
        report = await rag.index_paths([a, b])
        assert report.updated == [report.processed[0]] and len(report.unchanged) == 1
        assert calls(rag, "extract") - before == 1  # only the changed paragraph
        await assert_sound(rag)
        after = dumps(await rag.export(timestamps=False))
    assert after == await fresh_export(tmp_path, [a, b])


async def test_facts_only_the_old_version_had_disappear(tmp_path):
    docs = tmp_path / "docs"
    a = write(docs, "a.txt", document([0, 1]))
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        await rag.index_paths([a])
        old = {e["name"] for e in (await rag.export())["entities"]}
        write(docs, "a.txt", document([5]))
        await rag.index_paths([a])
        new = {e["name"] for e in (await rag.export())["entities"]}
        chunks = await rag.storage.kv("text_chunks").count()
        assert chunks == 1 and old - new  # the old paragraphs' names are gone
        hits = await rag.storage.lexical.search("Moreau Keller", 10)
        live = set(await rag.storage.kv("text_chunks").keys())
        assert all(h in live for h, _ in hits)
        await assert_sound(rag)


async def test_a_moved_file_keeps_its_id_and_is_not_extracted_again(tmp_path):
    docs = tmp_path / "docs"
    a = write(docs, "a.txt", document([0, 1, 2]))
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        [first] = (await rag.index_paths([a])).new
        before = calls(rag, "extract")
        moved = docs / "moved.txt"
        a.rename(moved)
        report = await rag.index_paths([moved])
        assert report.moved == [first] and calls(rag, "extract") == before
        [listed] = (await rag.documents())["documents"]
        assert listed["id"] == first and listed["path"] == str(moved.resolve())
        again = await rag.index_paths([moved])  # found by its source, not by its usual id
        assert again.unchanged == [first] and not again.new
        records = await all_records(rag.storage)
        assert named_documents([str(moved)], records) == {first}  # a query filter finds it too
        await assert_sound(rag)
        after = dumps(await rag.export(timestamps=False))
    fresh = await fresh_export(tmp_path, [moved])
    assert ids_by_source(fresh) != ids_by_source(after)  # the fresh index gives the usual id
    assert by_source(after) == by_source(fresh)


async def test_a_new_file_at_a_moved_file_s_old_path_is_another_document(tmp_path):
    docs = tmp_path / "docs"
    a = write(docs, "a.txt", document([0, 1]))
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        [first] = (await rag.index_paths([a])).new
        a.rename(docs / "b.txt")
        assert (await rag.index_paths([docs / "b.txt"])).moved == [first]
        write(docs, "a.txt", document([2, 3]))
        [second] = (await rag.index_paths([a])).new
        assert second != first  # the old path's usual id is the moved document's
        assert sorted((await rag.index_paths([docs])).unchanged) == sorted([first, second])
        ids, _ = await rag.delete([str(a)])  # a path names the document that has it now
        assert ids == [second]
        await assert_sound(rag)
        after = dumps(await rag.export(timestamps=False))
    assert by_source(after) == by_source(await fresh_export(tmp_path, [docs / "b.txt"]))


async def test_replace_lets_a_file_supersede_another_source(tmp_path):
    docs = tmp_path / "docs"
    a = write(docs, "manual-v1.txt", document([0, 1, 2]))
    b = write(docs, "manual-v2.txt", document([0, 1, 2], version=2, edited={2}))
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        await rag.index_paths([a])
        await rag.index_paths([b], replace=str(a))
        listing = await rag.documents()
        assert [d["path"] for d in listing["documents"]] == [str(b.resolve())]
        await assert_sound(rag)
        after = dumps(await rag.export(timestamps=False))
    assert after == await fresh_export(tmp_path, [b])


async def test_delete_recomputes_shared_entities_without_extraction(tmp_path):
    docs = tmp_path / "docs"
    paths = [write(docs, f"d{i}.txt", document([i, i + 1, i + 2])) for i in range(4)]
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        await rag.index_paths(paths)
        before = calls(rag, "extract")
        ids, _stats = await rag.delete([str(paths[1])])
        assert len(ids) == 1 and calls(rag, "extract") == before
        await assert_sound(rag)
        after = dumps(await rag.export(timestamps=False))
        with pytest.raises(DocumentNotFoundError):
            await rag.delete(["doc-nothing"])
    assert after == await fresh_export(tmp_path, [paths[0], paths[2], paths[3]])


async def test_delete_by_path_glob_and_everything(tmp_path):
    docs = tmp_path / "docs"
    paths = [write(docs, f"d{i}.txt", document([i, i + 3])) for i in range(3)]
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        await rag.index_paths(paths)
        ids, _ = await rag.delete(paths=[str(docs / "d*.txt")])
        assert len(ids) == 3
        exported = await rag.export()
        assert exported["entities"] == exported["relations"] == exported["chunks"] == []
        for ns in ("entities", "relations", "chunks"):
            assert await rag.storage.vectors(ns).count() == 0
        await assert_sound(rag)


async def test_arrival_order_does_not_change_the_graph(tmp_path):
    docs = tmp_path / "docs"
    paths = [write(docs, f"d{i}.txt", document([i, (i + 2) % 6, 7])) for i in range(5)]
    exports = []
    for n, order in enumerate(
        [paths, paths[::-1], [paths[2], paths[0], paths[4], paths[1], paths[3]]]
    ):
        async with KGRag(lifecycle_settings(tmp_path / f"idx{n}")) as rag:
            for p in order:  # one document per run: the strongest order dependence
                await rag.index_paths([p])
            exports.append(dumps(await rag.export(timestamps=False)))
    assert exports[0] == exports[1] == exports[2]


async def test_rebuild_recomputes_the_same_graph_with_no_llm_call(tmp_path):
    docs = tmp_path / "docs"
    paths = [write(docs, f"d{i}.txt", document([i, i + 1])) for i in range(3)]
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        await rag.index_paths(paths)
        before = dumps(await rag.export(timestamps=False))
        extract, summary = calls(rag, "extract"), calls(rag, "summary")
        report = await rag.rebuild()
        assert len(report.processed) == 3
        assert (calls(rag, "extract"), calls(rag, "summary")) == (extract, summary)
        assert dumps(await rag.export(timestamps=False)) == before
        await assert_sound(rag)


async def test_check_finds_damage_and_repair_mends_the_search_stores(tmp_path):
    docs = tmp_path / "docs"
    paths = [write(docs, f"d{i}.txt", document([i, i + 1])) for i in range(2)]
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        await rag.index_paths(paths)
        await assert_sound(rag)
        s = rag.storage
        [chunk] = (await s.kv("text_chunks").keys())[:1]
        await s.vectors("chunks").delete([chunk])
        await s.lexical.delete([chunk])
        name = (await s.graph.all_node_names())[0]
        some = await s.vectors("entities").get_vectors([(await s.vectors("entities").ids())[0]])
        await s.vectors("entities").upsert(
            ["ent-orphan"], np.stack(list(some.values())), [{"name": "ghost"}]
        )
        report = await rag.check()
        text = "\n".join(report.problems)
        assert "chunks vector" in text and "orphan" in text and "lexical" in text
        assert name  # the graph itself is intact
        repaired = await rag.check(repair=True)
        assert repaired.ok, repaired.problems


async def test_disable_keeps_the_document_indexed(tmp_path):
    docs = tmp_path / "docs"
    a = write(docs, "a.txt", document([0, 1]))
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        await rag.index_paths([a], metadata={"team": "ops"})
        [doc] = await rag.set_disabled([str(a)])
        listing = (await rag.documents())["documents"]
        assert listing[0]["disabled"] and listing[0]["metadata"] == {"team": "ops"}
        assert (await rag.status())["disabled"] == [doc]
        await rag.set_disabled([doc], disabled=False)
        assert not (await rag.documents())["documents"][0]["disabled"]
        await assert_sound(rag)


async def test_a_long_lived_reader_sees_another_writers_commits(tmp_path):
    docs = tmp_path / "docs"
    a = write(docs, "a.txt", document([0, 1]))
    settings = lifecycle_settings(tmp_path / "idx")
    async with KGRag(settings) as writer:
        await writer.index_paths([a])
        async with KGRag(settings) as reader:  # its own connection, like another process
            for mode in ("naive", "ppr"):
                data = await reader.query_data("Who met in Lyon?", mode=mode)
                assert any("Lyon" in c["content"] for c in data["chunks"]), mode
            write(docs, "a.txt", document([2, 3]))  # same shape, other facts: counts may not move
            await writer.index_paths([a])
            live = set(await writer.storage.kv("text_chunks").keys())
            for mode in ("naive", "ppr"):
                data = await reader.query_data("Who met in Turin?", mode=mode)
                assert {c["chunk_id"] for c in data["chunks"]} <= live, mode
                assert any("Turin" in c["content"] for c in data["chunks"]), mode


async def test_a_document_being_reindexed_keeps_serving_its_committed_version(tmp_path):
    import dataclasses

    from kgrag.types import DocStatus

    docs = tmp_path / "docs"
    a = write(docs, "a.txt", document([0, 1]))
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        await rag.index_paths([a])
        [record] = await rag.storage.doc_status.by_status(DocStatus.PROCESSED)
        # what a reader sees between enqueue and commit of a new version
        await rag.storage.doc_status.upsert([dataclasses.replace(record, status=DocStatus.PENDING)])
        data = await rag.query_data("Who met in Lyon?", mode="naive", doc_ids=[record.id])
        assert data["chunks"] and all(
            record.id in c.get("doc_ids", [c["doc_id"]]) or c["doc_id"] == record.id
            for c in data["chunks"]
        )


async def test_purge_cache_drops_the_removed_chunks_answers_only(tmp_path):
    docs = tmp_path / "docs"
    a = write(docs, "a.txt", document([0, 1]))
    b = write(docs, "b.txt", document([1, 2]))  # shares paragraph 1 with a
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        await rag.index_paths([a, b])
        cache = rag.storage.kv("llm_cache")

        async def tags():
            rows = await cache.get_many(await cache.keys())
            return {r.get("tag") for r in rows if r and r.get("role") == "extract"}

        before = await tags()
        assert len(before) == 3
        _, stats = await rag.delete([str(a)], purge_cache=True)
        assert len(stats.dead_chunks) == 1
        assert await tags() == before - set(stats.dead_chunks)


async def test_concurrent_inserts_in_one_process_merge_each_document_once(tmp_path):
    import asyncio

    texts = [document([i, i + 1, 7]) for i in range(6)]
    ids = [f"note-{i}" for i in range(6)]
    async with KGRag(lifecycle_settings(tmp_path / "together")) as rag:
        reports = await asyncio.gather(
            rag.insert(texts[:3], ids=ids[:3]),
            rag.insert(texts[3:], ids=ids[3:]),
            rag.insert(texts[1:4], ids=ids[1:4]),
        )
        processed = [d for r in reports for d in r.processed]
        assert sorted(processed) == sorted(set(processed)) and len(processed) == 6  # once each
        together = dumps(await rag.export(timestamps=False))
        assert (await rag.check()).ok
    async with KGRag(lifecycle_settings(tmp_path / "alone")) as rag:
        await rag.insert(texts, ids=ids)
        assert dumps(await rag.export(timestamps=False)) == together


async def test_two_sessions_saving_their_costs_at_once_both_count(tmp_path):
    import asyncio

    settings = lifecycle_settings(tmp_path / "idx")
    async with KGRag(settings) as one, KGRag(settings) as two:
        for i, rag in enumerate((one, two)):
            await rag.models.chat.chat([{"role": "user", "content": f"hello {i}"}], role="answer")
        await asyncio.gather(one._save_ledger(), two._save_ledger())
        stored = await one.storage.get_meta("ledger")
    assert stored["answer"]["calls"] == 2


async def test_rejected_inputs_and_relative_paths_are_remembered(tmp_path):
    docs = tmp_path / "docs"
    write(docs / "sub", "a.txt", document([0]))
    bad = docs / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4 not really")
    async with KGRag(lifecycle_settings(tmp_path / "idx")) as rag:
        await rag.index_paths([docs])
        status = await rag.status()
        assert list(status["rejected_inputs"]) == [str(bad.resolve())]
        [listed] = (await rag.documents())["documents"]
        assert listed["relative_path"] == "sub/a.txt"
        bad.unlink()
        write(docs, "broken.txt", document([1]))
        await rag.index_paths([docs])
        assert (await rag.status())["rejected_inputs"] == {}  # the refused file is gone
