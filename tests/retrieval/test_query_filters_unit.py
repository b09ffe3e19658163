"""The filter's parts on their own: verdicts, widening searches, ppr ranking."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from kgrag.retrieval.filter.documents import (
    DISABLED,
    NOT_SELECTED,
    DocFilter,
    FilterSpec,
    Selection,
    hit_gate,
    path_matches,
)
from kgrag.retrieval.keywords.source import KeywordSet
from kgrag.retrieval.modes.chunks import _lexical_search, _sources
from kgrag.retrieval.modes.ppr import _rank_chunks
from kgrag.retrieval.modes.search import vector_search
from kgrag.retrieval.param import QueryParam
from kgrag.retrieval.records import RetrievalContext
from kgrag.retrieval.trace import NO_TRACE, Trace
from kgrag.storage.base import VectorHit
from kgrag.types import DocRecord, DocStatus


def allow_only(
    docs: set[str], chunks: set[str], blocked: frozenset[str] = frozenset()
) -> DocFilter:
    selection = Selection(frozenset(docs), frozenset(chunks), frozenset(), blocked)
    return DocFilter(None, FilterSpec(doc_ids=tuple(sorted(docs))), selection)


class RankedStore:
    """A vector store returning ``n`` hits ``h000``, ``h001``... with falling scores."""

    def __init__(self, n: int):
        self.hits = [VectorHit(f"h{i:03d}", 1.0 - i / 1000, {}) for i in range(n)]
        self.asked: list[int] = []

    def vectors(self, namespace: str) -> RankedStore:
        return self

    async def query(self, vector, top_k, threshold=None):
        self.asked.append(top_k)
        return list(self.hits[:top_k])


async def search(store: RankedStore, flt: DocFilter, trace=NO_TRACE, top_k: int = 2):
    return await vector_search(
        store,
        "chunks",
        np.zeros(4),
        top_k,
        0.0,
        trace,
        route="chunks",
        kind="chunk",
        gate=hit_gate(flt, "chunk"),
    )


async def test_a_gated_search_widens_until_top_k_pass():
    store = RankedStore(300)
    hits = await search(store, allow_only({"d"}, {"h050", "h051", "h052"}))
    assert [h.id for h in hits] == ["h050", "h051"]
    assert store.asked == [2, 8, 32, 128]


async def test_widening_stops_at_the_last_widening_and_when_the_store_runs_out():
    store = RankedStore(300)
    assert await search(store, allow_only({"d"}, {"h200"})) == []
    assert store.asked == [2, 8, 32, 128]
    short = RankedStore(5)
    assert [h.id for h in await search(short, allow_only({"d"}, {"h004"}))] == ["h004"]
    assert short.asked == [2, 8]


async def test_a_gate_refusing_nothing_asks_what_an_unfiltered_search_asks():
    store = RankedStore(300)
    every = allow_only({"d"}, {h.id for h in store.hits})
    assert [h.id for h in await search(store, every)] == ["h000", "h001"]
    assert store.asked == [2]


async def test_the_trace_lists_refused_hits_that_would_have_ranked():
    trace, store = Trace(), RankedStore(300)
    await search(store, allow_only({"d"}, {"h003", "h004"}, blocked=frozenset({"h000"})), trace)
    lost = [(d["id"], d["reason"]) for d in trace.dropped if d["stage"] == "filter"]
    assert lost == [("h000", DISABLED), ("h001", NOT_SELECTED), ("h002", NOT_SELECTED)]


class RankedLexical:
    def __init__(self, n: int):
        self.hits = [(f"h{i:03d}", float(100 - i)) for i in range(n)]
        self.asked: list[int] = []

    async def search(self, text, k):
        self.asked.append(k)
        return self.hits[:k]


async def test_lexical_search_widens_too():
    index = RankedLexical(100)
    kept, refused = await _lexical_search(index, "q", 2, allow_only({"d"}, {"h010", "h011"}))
    assert kept == [("h010", 90.0), ("h011", 89.0)] and index.asked == [2, 8, 32]
    assert [c for c, _ in refused] == [f"h{i:03d}" for i in range(10)]
    index = RankedLexical(100)
    assert await _lexical_search(index, "q", 2, DocFilter(None)) == (index.hits[:2], [])


def test_chunks_are_allowed_through_any_of_their_documents():
    flt = allow_only({"a"}, {"c1"})
    assert flt.allows_chunk({"doc_ids": ["a", "b"], "doc_id": "b"})
    assert not flt.allows_chunk({"doc_ids": ["b"], "doc_id": "b"})
    assert flt.allows_chunk({"doc_id": "a"})  # rows written before doc_ids existed
    assert not flt.allows_chunk({})
    assert flt.allows_chunk_id("c1") and not flt.allows_chunk_id("c2")


def test_without_a_filter_only_chunks_of_disabled_documents_alone_are_blocked():
    flt = DocFilter(
        None, FilterSpec(), Selection(None, frozenset(), frozenset({"x"}), frozenset({"c9"}))
    )
    assert flt.is_active and flt.allows_doc("a") and not flt.allows_doc("x")
    assert flt.allows_chunk({"doc_ids": ["x", "a"]}) and not flt.allows_chunk({"doc_ids": ["x"]})
    assert flt.allows_chunk_id("c1") and not flt.allows_chunk_id("c9")
    assert flt.chunk_reason("c9") == DISABLED
    assert flt.describe() == {
        "active": True,
        "doc_ids": [],
        "path_glob": [],
        "where": {},
        "documents": None,
        "disabled": ["x"],
    }
    assert not DocFilter(None).is_active and DocFilter(None).describe()["active"] is False


def record(**fields) -> DocRecord:
    base = {
        "id": "d",
        "status": DocStatus.PROCESSED,
        "file_path": "notes/a.md",
        "content_length": 1,
        "content_summary": "",
        "source": "/data/notes/a.md",
        "metadata": {"year": 2020, "lang": "en"},
    }
    return DocRecord(**{**base, **fields})


def test_globs_match_source_or_file_path_and_where_compares_strings(tmp_path, monkeypatch):
    r = record()
    assert (
        path_matches(r, "notes/*.md")
        and path_matches(r, "/data/*")
        and not path_matches(r, "*.txt")
    )
    monkeypatch.chdir(tmp_path)
    moved = record(file_path="a.md", source=str(tmp_path / "notes" / "a.md"))
    assert path_matches(moved, "notes/a.md") and path_matches(
        moved, "notes/*"
    )  # tried made absolute
    assert FilterSpec(where=(("year", "2020"), ("lang", "en"))).matches(r)
    assert not FilterSpec(where=(("year", "2021"),)).matches(r)
    assert not FilterSpec(where=(("colour", "None"),)).matches(r)
    spec = FilterSpec.from_param(QueryParam(doc_ids="d", where={"year": 2020}))
    assert spec.doc_ids == ("d",) and spec.where == (("year", "2020"),) and spec.given
    assert not FilterSpec.from_param(QueryParam(doc_ids=[], where={})).given


def test_ppr_ranks_only_allowed_chunks():
    graph = SimpleNamespace(entities=["e"], chunks=["c1", "c2", "c3", "c4"])
    mass = np.array([0.3, 0.3, 0.2, 0.15, 0.05])
    ctx = RetrievalContext(
        None,
        "q",
        QueryParam(chunk_top_k=2),
        KeywordSet(source="unused"),
        {},
        Trace(),
        allow_only({"d"}, {"c3", "c4"}),
    )
    assert [c.id for c in _rank_chunks(ctx, graph, mass, [])] == ["c3", "c4"]
    lost = [d["id"] for d in ctx.trace.dropped if d["stage"] == "filter"]
    assert lost == ["c1", "c2"]


async def test_graph_chunks_fall_back_on_the_uncapped_support():
    class Support:
        async def get_many(self, keys):
            return [{"chunks": ["c1", "c2"]} if k == "e:E" else None for k in keys]

    flt = allow_only({"d"}, {"c2"})
    flt.storage = SimpleNamespace(kv=lambda namespace: Support())
    assert await flt.allowed_keys(["E", "F"]) == {"E"}
    assert _sources(flt, "E", {"source_ids": ["c1"]}) == ["c2"]  # c2 is past the stored cap
    assert _sources(flt, "E", {"source_ids": ["c2", "c1"]}) == ["c2"]
    assert _sources(DocFilter(None), "E", {"source_ids": ["c1"]}) == ["c1"]
