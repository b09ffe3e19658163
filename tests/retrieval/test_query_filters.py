"""Query filters (doc_ids, path_glob, where) and disabled documents, on a real index."""

from __future__ import annotations

import pytest

from kgrag.api.facade import KGRag
from kgrag.errors import DocumentNotFoundError, QueryError
from kgrag.retrieval import render_trace
from kgrag.retrieval.filter.documents import DISABLED, NOT_SELECTED, build_filter
from tests.retrieval.filter_corpus import (
    DOCS,
    KEYWORDS,
    MODES,
    QUESTION,
    documents_behind,
    index_docs,
    items,
    settings,
)


@pytest.fixture
async def indexed(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        ids = await index_docs(rag)
        yield rag, ids


async def ask(rag: KGRag, mode: str, trace: bool = False, **filters):
    return await rag.query_data(
        QUESTION, mode=mode, cosine_threshold=-1.0, trace=trace, **KEYWORDS, **filters
    )


def assert_only(behind: dict, doc: str) -> None:
    """Every chunk is contained in ``doc``; every entity / relation is supported by one of its chunks."""
    for kind, found in behind.items():
        for item, docs in found.items():
            assert doc in docs, f"{kind} {item} comes from {docs}, not {doc}"


@pytest.mark.parametrize("mode", MODES)
async def test_a_query_filtered_to_one_document_retrieves_only_from_it(indexed, mode):
    rag, ids = indexed
    everything = await documents_behind(rag, await ask(rag, mode))
    assert (
        len({d for docs in everything["chunks"].values() for d in docs}) >= 2
    )  # unfiltered: mixed
    for source, doc in ids.items():
        data = await ask(rag, mode, doc_ids=[source])
        assert data["chunks"], f"{mode}: nothing retrieved from {source}"
        assert data["filter"]["active"] and data["filter"]["doc_ids"] == [source]
        assert data["filter"]["documents"] == 1
        assert_only(await documents_behind(rag, data), doc)
        if mode != "naive":
            assert data["entities"], f"{mode}: no entity of {source}"


async def test_a_document_is_named_by_id_or_by_source(indexed):
    rag, ids = indexed
    by_source = await ask(rag, "mix", doc_ids=["music"])
    by_id = await ask(rag, "mix", doc_ids=[ids["music"]])
    assert items(by_source) == items(by_id)


async def test_several_documents_are_any_of_them(indexed):
    rag, ids = indexed
    data = await ask(rag, "naive", doc_ids=["astro", "food"])
    docs = {d for c in (await documents_behind(rag, data))["chunks"].values() for d in c}
    assert docs <= {ids["astro"], ids["food"]} and len(docs) == 2


@pytest.mark.parametrize("mode", MODES)
async def test_where_selects_documents_by_metadata(indexed, mode):
    rag, ids = indexed
    music = await ask(rag, mode, where={"subject": "music"})
    assert items(music) == items(await ask(rag, mode, doc_ids=["music"]))
    assert music["filter"]["where"] == {"subject": "music"}
    english = await ask(rag, mode, where={"lang": "en"})
    behind = await documents_behind(rag, english)
    assert all(
        docs & {ids["astro"], ids["music"]} for found in behind.values() for docs in found.values()
    )
    both = await ask(rag, mode, where={"lang": "en", "subject": "astronomy"})
    assert items(both) == items(await ask(rag, mode, doc_ids=["astro"]))


async def test_where_that_matches_nothing_retrieves_nothing(indexed):
    rag, _ = indexed
    data = await ask(rag, "mix", where={"subject": "chemistry"})
    assert data["status"] == "no_context" and not data["chunks"] and not data["entities"]
    assert data["filter"]["documents"] == 0
    data = await ask(rag, "mix", where={"colour": "blue"})  # a key no document has
    assert data["status"] == "no_context"


@pytest.mark.parametrize("mode", ["mix", "ppr"])
async def test_path_glob_matches_the_file_path(indexed, mode):
    rag, ids = indexed
    data = await ask(rag, mode, path_glob=["notes/*"])
    behind = await documents_behind(rag, data)
    allowed = {ids["astro"], ids["music"]}
    assert data["chunks"] and all(
        docs & allowed for found in behind.values() for docs in found.values()
    )
    recipes = await ask(rag, mode, path_glob=["recipes/*", "nowhere/*"])
    assert items(recipes) == items(await ask(rag, mode, doc_ids=["food"]))


async def test_filter_kinds_combine_with_and(indexed):
    rag, _ = indexed
    data = await ask(rag, "mix", path_glob=["notes/*"], where={"subject": "food"})
    assert data["status"] == "no_context" and data["filter"]["documents"] == 0
    data = await ask(rag, "mix", doc_ids=["astro", "music"], where={"subject": "music"})
    assert items(data) == items(await ask(rag, "mix", doc_ids=["music"]))


async def test_relative_path_globs_are_tried_absolute(tmp_path, monkeypatch):
    folder = tmp_path / "docs"
    folder.mkdir()
    for source, (_, _, text) in DOCS.items():
        (folder / f"{source}.txt").write_text(text, encoding="utf-8")
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await rag.index_paths([folder], metadata={"kind": "note"})
        monkeypatch.chdir(tmp_path)
        data = await ask(rag, "mix", path_glob=["docs/music*"])
        assert data["chunks"] and {c["file_path"] for c in data["chunks"]} == {
            str(folder / "music.txt")
        }
        absolute = await ask(rag, "mix", path_glob=[str(folder / "music.txt")])
        assert items(absolute) == items(data)
        tagged = await ask(rag, "mix", where={"kind": "note"})
        assert items(tagged) == items(await ask(rag, "mix"))


async def test_unknown_document_ids_are_an_error(indexed):
    rag, _ = indexed
    with pytest.raises(DocumentNotFoundError, match="'nope'"):
        await ask(rag, "mix", doc_ids=["music", "nope"])
    with pytest.raises(QueryError):
        await ask(rag, "mix", where=["subject=music"])  # not a dict


@pytest.mark.parametrize("mode", MODES)
async def test_a_disabled_document_is_never_retrieved_and_comes_back_when_enabled(indexed, mode):
    rag, ids = indexed
    before = await ask(rag, mode)
    food = ids["food"]
    await rag.set_disabled(["food"])
    data = await ask(rag, mode)
    assert data["filter"]["active"] and data["filter"]["disabled"] == [food]
    for kind, found in (await documents_behind(rag, data)).items():
        for item, docs in found.items():
            assert docs - {food}, f"{kind} {item} comes from the disabled document only"
    assert data["chunks"]
    named = await ask(rag, mode, doc_ids=["food"])
    assert not named["chunks"] and named["filter"]["excluded"] == {food: "disabled"}
    await rag.set_disabled(["food"], disabled=False)
    after = await ask(rag, mode)
    assert items(after) == items(before) and not after["filter"]["active"]


async def test_disabling_one_owner_of_a_shared_chunk_keeps_it(tmp_path):
    docs = {
        **DOCS,
        "astro-copy": ("notes/astronomy-copy.md", {"subject": "astronomy"}, DOCS["astro"][2]),
    }
    async with KGRag(settings(tmp_path / "idx")) as rag:
        ids = await index_docs(rag, docs)
        before = await ask(rag, "naive", doc_ids=["astro"])
        await rag.set_disabled(["astro"])
        data = await ask(rag, "naive", doc_ids=["astro-copy"])
        assert items(data) == items(before)  # the same chunks: both documents contain them
        behind = await documents_behind(rag, data)
        assert all(docs == {ids["astro"], ids["astro-copy"]} for docs in behind["chunks"].values())
        unfiltered = await documents_behind(rag, await ask(rag, "naive"))
        assert any(ids["astro"] in docs for docs in unfiltered["chunks"].values())


@pytest.mark.parametrize("mode", MODES)
async def test_a_filter_allowing_every_document_changes_nothing(indexed, mode):
    rag, _ = indexed
    plain = await ask(rag, mode)
    every = await ask(rag, mode, doc_ids=list(DOCS))
    assert every["filter"]["active"] and items(every) == items(plain)


async def test_no_filter_and_nothing_disabled_reads_no_filter_records(indexed, monkeypatch):
    rag, _ = indexed
    read: list[str] = []
    kv = rag.storage.kv

    def spying(namespace):
        read.append(namespace)
        return kv(namespace)

    monkeypatch.setattr(rag.storage, "kv", spying)
    flt = await build_filter(rag.storage, rag.query_param())
    assert not flt.is_active and read == []
    assert await flt.allowed_keys(["Florence"]) == {"Florence"} and read == []
    await ask(rag, "local")
    assert "graph_support" not in read and "doc_graph" not in read


@pytest.mark.parametrize("mode", ["naive", "mix", "ppr"])
async def test_filtered_queries_still_fill_their_chunk_budget(indexed, mode):
    rag, ids = indexed
    chunks_of = {source: set(await owners_of(rag, ids[source])) for source in DOCS}
    plain = [c["chunk_id"] for c in (await ask(rag, mode, chunk_top_k=1))["chunks"]]
    tried = 0
    for source, chunks in chunks_of.items():
        if plain[0] in chunks:
            continue  # this document holds the unfiltered best hit: nothing to over-fetch
        data = await ask(rag, mode, doc_ids=[source], chunk_top_k=len(chunks))
        assert {c["chunk_id"] for c in data["chunks"]} == chunks
        tried += 1
    assert tried >= 2


async def owners_of(rag: KGRag, doc: str) -> list[str]:
    """The chunks whose ``text_chunks`` row lists ``doc``."""
    ids = await rag.storage.kv("text_chunks").keys()
    rows = await rag.storage.kv("text_chunks").get_many(ids)
    return [c for c, row in zip(ids, rows, strict=False) if doc in row["doc_ids"]]


async def test_the_trace_names_what_the_filter_removed(indexed):
    rag, _ = indexed
    data = await ask(rag, "mix", trace=True, doc_ids=["music"])
    trace = data["trace"]
    assert trace["filter"]["doc_ids"] == ["music"]
    lost = [d for d in trace["dropped"] if d["stage"] == "filter"]
    assert lost and {d["reason"] for d in lost} == {NOT_SELECTED}
    retrieved = {c["chunk_id"] for c in data["chunks"]} | {
        e["entity_name"] for e in data["entities"]
    }
    assert not {d["id"] for d in lost} & retrieved
    text = render_trace(trace)
    assert "[filter] doc_ids=['music']" in text and "[filter]" in text.split("[retrieval]")[1]
    await rag.set_disabled(["food"])
    trace = (await ask(rag, "mix", trace=True))["trace"]
    reasons = {d["reason"] for d in trace["dropped"] if d["stage"] == "filter"}
    assert reasons == {DISABLED}


async def test_bypass_ignores_filters(indexed):
    rag, _ = indexed
    data = await rag.query_data(QUESTION, mode="bypass", doc_ids=["music"])
    assert data["filter"] is None and not data["chunks"]


@pytest.mark.parametrize("source", list(DOCS))
async def test_ppr_on_an_nlp_index_retrieves_only_from_the_selected_document(tmp_path, source):
    async with KGRag(settings(tmp_path / "idx", extractor="nlp")) as rag:
        ids = await index_docs(rag)
        assert await rag.storage.get_meta("extractors") == ["nlp"]
        plain = await rag.query_data(QUESTION, mode="ppr", cosine_threshold=-1.0)
        assert (
            len(
                {
                    d
                    for docs in (await documents_behind(rag, plain))["chunks"].values()
                    for d in docs
                }
            )
            >= 2
        )
        data = await rag.query_data(QUESTION, mode="ppr", cosine_threshold=-1.0, doc_ids=[source])
        assert data["chunks"] and data["entities"]
        assert_only(await documents_behind(rag, data), ids[source])
        await rag.set_disabled([source])
        gone = await documents_behind(
            rag, await rag.query_data(QUESTION, mode="ppr", cosine_threshold=-1.0)
        )
        assert all(docs - {ids[source]} for found in gone.values() for docs in found.values())
