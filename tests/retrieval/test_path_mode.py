"""Mode ``path`` and the path section of ``mix``, end to end on a real SQLite store.

The corpus (:mod:`query.path_corpus`) hides a 3-hop chain between the two
names of the question among distractor branches and a hub.
"""

from __future__ import annotations

import pytest

from kgrag.api.facade import KGRag
from kgrag.errors import QueryError
from kgrag.llm.embedding import EmbeddingService
from kgrag.llm.fake import FakeEmbeddingProvider
from kgrag.llm.ledger import Ledger
from kgrag.retrieval import QueryEngine, QueryParam, render_trace
from kgrag.storage.sqlite import memory_storage
from tests.retrieval import filter_corpus as FC
from tests.retrieval.path_corpus import CHAIN, CHAIN_EDGES, QUESTION, cid, write_corpus

CHAIN_TEXT = "Mira Solen —studied under→ Ovid Tark —founded→ Harrow Guild —awards→ Quill Prize"


@pytest.fixture
async def engine(tmp_path):
    storage = memory_storage(tmp_path)
    await storage.open()
    embed = EmbeddingService(FakeEmbeddingProvider(dim=256), ledger=Ledger())
    await write_corpus(storage, embed)
    yield QueryEngine(storage, None, embed)
    await storage.close()


async def test_path_mode_finds_the_chain_in_order_with_its_chunks(engine):
    data = await engine.query_data(QUESTION, QueryParam(mode="path"))
    assert data["status"] == "success"
    best = data["paths"][0]
    assert best["nodes"] == CHAIN and best["hops"] == 3 and not best["open"]
    assert best["chain"] == CHAIN_TEXT
    path_chunks = [c["chunk_id"] for c in data["chunks"] if c["route"] == "path"]
    assert path_chunks[:3] == [cid(r) for r in CHAIN_EDGES]
    hub = [p for p in data["paths"] if "Writers" in p["nodes"]]
    assert all(data["paths"].index(p) > 0 for p in hub)


async def test_the_context_shows_the_chain_with_its_relation_numbers(engine):
    result = await engine.query(QUESTION, QueryParam(mode="path", only_need_context=True))
    context = result.context
    assert CHAIN_TEXT in context
    paths_at, chunks_at = context.index("Knowledge graph paths"), context.index("Document chunks")
    assert context.index("Knowledge graph relations") < paths_at < chunks_at


async def test_mix_adds_paths_when_two_entities_are_named(engine):
    data = await engine.query_data(QUESTION, QueryParam(mode="mix"), trace=True)
    assert data["paths"] and data["paths"][0]["nodes"] == CHAIN
    pairs = {(r["src_id"], r["tgt_id"]) for r in data["relations"]}
    assert ("Harrow Guild", "Ovid Tark") in pairs  # the chain's relations are listed for it
    one = await engine.query_data("Who is Ovid Tark?", QueryParam(mode="mix"), trace=True)
    assert one["paths"] == []
    notes = [n["message"] for n in one["trace"]["notes"]]
    assert any("no path section" in n for n in notes)


async def test_trace_records_the_path_route(engine):
    data = await engine.query_data(QUESTION, QueryParam(mode="path"), trace=True)
    routes = {r["route"]: r for r in data["trace"]["routes"]}
    assert routes["path"]["items"][0]["id"] == " -> ".join(CHAIN)
    seeds = [i["id"] for i in routes["path/endpoints/seeds"]["items"]]
    assert seeds[:2] == ["Mira Solen", "Quill Prize"]
    assert any(n["message"].startswith("path search:") for n in data["trace"]["notes"])
    assert "path -> " in render_trace(data["trace"])


async def test_max_paths_and_max_expanded_are_respected(engine):
    one = await engine.query_data(QUESTION, QueryParam(mode="path", path_max_paths=1))
    assert len(one["paths"]) == 1 and one["paths"][0]["nodes"] == CHAIN
    data = await engine.query_data(
        QUESTION, QueryParam(mode="path", path_max_expanded=2), trace=True
    )
    note = next(n["message"] for n in data["trace"]["notes"] if "path search" in n["message"])
    assert "2 node expansion(s)" in note and "stopped: max_expanded" in note
    assert all(p["hops"] <= 2 for p in data["paths"])  # two expansions reach two hops at most


async def test_paths_share_the_relation_budget(engine):
    full = await engine.query_data(QUESTION, QueryParam(mode="path"))
    tight = await engine.query_data(
        QUESTION, QueryParam(mode="path", max_relation_tokens=300), trace=True
    )
    assert 0 < len(tight["paths"]) < len(full["paths"])
    cut = [
        d
        for d in tight["trace"]["dropped"]
        if (d["kind"], d["stage"]) == ("path", "truncation") and "path_max_paths" not in d["reason"]
    ]
    assert len(cut) == len(full["paths"]) - len(tight["paths"])
    assert tight["tokens"]["relations"] + tight["tokens"]["paths"] <= 300


async def test_a_filtered_query_keeps_paths_inside_the_selected_document(tmp_path):
    async with KGRag(FC.settings(tmp_path / "idx")) as rag:
        ids = await FC.index_docs(rag)
        ask = {"mode": "path", "cosine_threshold": -1.0, **FC.KEYWORDS}
        assert (await rag.query_data(FC.QUESTION, **ask))["paths"]
        for source, doc in ids.items():
            data = await rag.query_data(FC.QUESTION, doc_ids=[source], **ask)
            behind = await FC.documents_behind(rag, data)
            for kind, found in behind.items():
                assert all(doc in docs for docs in found.values()), (kind, found)
            keys = [tuple(k) for p in data["paths"] for k in p["relations"]]
            held = await FC.owners(
                rag, [c for cs in (await FC.support(rag, keys)).values() for c in cs]
            )
            for key, chunks in (await FC.support(rag, keys)).items():
                assert any(doc in held.get(c, set()) for c in chunks), key


@pytest.mark.parametrize(
    "field, value",
    [
        ("path_max_hops", 0),
        ("path_max_hops", 5),
        ("path_max_paths", -1),
        ("path_max_expanded", 0),
        ("path_deadline_ms", 0),
    ],
)
def test_path_limits_are_validated(field, value):
    with pytest.raises(QueryError, match=field):
        QueryParam(**{field: value}).validate()


async def test_dropping_chunks_to_fit_the_prompt_keeps_the_path_section(engine):
    from kgrag.retrieval.assemble import assemble
    from kgrag.retrieval.engine import _drop_last_chunk
    from kgrag.retrieval.modes.registry import get_mode
    from kgrag.retrieval.trace import NO_TRACE

    param = QueryParam(mode="path")
    asm = await assemble(engine.services, QUESTION, param, get_mode("path"), NO_TRACE)
    count = len(asm.chunks)
    _drop_last_chunk(asm)
    assert len(asm.chunks) == count - 1 and CHAIN_TEXT in asm.context
