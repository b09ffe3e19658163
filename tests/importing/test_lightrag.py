"""``kgrag import --from lightrag``: a real LightRAG 1.5.7 working directory, node for node.

The fixture (tests/importing/data/lightrag_wd) was written by LightRAG itself
(scripts/make_lightrag_fixture.py) against the in-repo fake server, so the
server here gives kgrag the very embeddings LightRAG stored.
"""

from __future__ import annotations

import json
import shutil

import networkx as nx
import pytest

from kgrag.api.facade import KGRag
from kgrag.ingest.ids import chunk_id
from kgrag.maintenance.importing.model import ImportFormatError
from kgrag.storage.base import edge_key
from kgrag.types import SEP
from tests.support.fake_openai import fake_openai
from tests.support.settings import http_settings

from .helpers import LIGHTRAG_DOCS, LIGHTRAG_WD, extraction_calls, settings


def _lightrag():
    """LightRAG's graph read by networkx, with its chunk ids mapped to kgrag's (text md5)."""
    graph = nx.read_graphml(LIGHTRAG_WD / "graph_chunk_entity_relation.graphml")
    chunks = json.loads((LIGHTRAG_WD / "kv_store_text_chunks.json").read_text(encoding="utf-8"))
    ids = {k: chunk_id(v["content"]) for k, v in chunks.items()}
    return graph, ids


def _settings(workdir, base_url):
    return http_settings(workdir, base_url, chunk_size=1200, chunk_overlap=100, max_gleaning=0)


def _parts(value):
    return {v for v in str(value).split(SEP) if v}


@pytest.fixture
def server():
    with fake_openai() as srv:
        yield srv


async def test_import_matches_lightrag_node_for_node(tmp_path, server):
    graph, ids = _lightrag()
    async with KGRag(_settings(tmp_path / "idx", server.base_url)) as rag:
        report = await rag.import_graph(LIGHTRAG_WD, source="lightrag")
        assert (await rag.check()).ok
        assert extraction_calls(rag) == 0
        export = await rag.export(timestamps=False)
    nodes = {e["name"]: e for e in export["entities"]}
    assert set(nodes) == set(graph.nodes)
    for name, data in graph.nodes(data=True):
        mine = nodes[name]
        assert mine["entity_type"] == data["entity_type"], name
        assert _parts(mine["description"]) == _parts(data["description"]), name
        assert set(mine["source_ids"]) == {ids[c] for c in _parts(data["source_id"])}, name
        assert set(mine["file_paths"]) == _parts(data["file_path"]), name
    edges = {(r["src"], r["tgt"]): r for r in export["relations"]}
    assert set(edges) == {edge_key(a, b) for a, b in graph.edges}
    for a, b, data in graph.edges(data=True):
        mine = edges[edge_key(a, b)]
        assert mine["weight"] == pytest.approx(float(data["weight"]))
        assert _parts(mine["description"]) == _parts(data["description"])
        assert {k.strip() for k in mine["keywords"].split(",")} == {
            k.strip() for k in data["keywords"].split(",")
        }
        assert set(mine["source_ids"]) == {ids[c] for c in _parts(data["source_id"])}
        assert [a, b] in mine["directions"] or [b, a] in mine["directions"]
    assert len(export["documents"]) == 3 and len(export["chunks"]) == 3
    # Same embedder as LightRAG's: its vectors are reused (one probe call checks that).
    # (A key whose kgrag text differs, e.g. fragments in another order, is embedded anew.)
    assert report.vectors_reused >= len(export["chunks"])
    assert report.vectors_reused > report.vectors_embedded
    assert report.warnings == []


async def test_reindexing_the_same_files_costs_no_extraction_call(tmp_path, server):
    async with KGRag(_settings(tmp_path / "idx", server.base_url)) as rag:
        await rag.import_graph(LIGHTRAG_WD, source="lightrag")
        before = await rag.export(timestamps=False)
        server.reset()
        report = await rag.index_paths([LIGHTRAG_DOCS])
        assert len(report.processed) == 3  # known by their files now, beside LightRAG's ids
        assert extraction_calls(rag) == 0
        assert server.stats()["calls"].get("extraction", 0) == 0
        assert (await rag.check()).ok
        after = await rag.export(timestamps=False)
    names = lambda e: {x["name"] for x in e["entities"]}  # noqa: E731 - a one-line view
    assert names(after) == names(before)
    assert {c["id"] for c in after["chunks"]} == {c["id"] for c in before["chunks"]}


async def test_with_root_the_files_are_the_documents_and_come_out_unchanged(tmp_path, server):
    async with KGRag(_settings(tmp_path / "idx", server.base_url)) as rag:
        await rag.import_graph(LIGHTRAG_WD, source="lightrag", root=LIGHTRAG_DOCS)
        report = await rag.index_paths([LIGHTRAG_DOCS])
        assert report.processed == [] and extraction_calls(rag) == 0
        docs = (await rag.documents())["documents"]
    assert len(docs) == 3
    assert {d["relative_path"] for d in docs} == {
        "characters.txt",
        "counting_house.txt",
        "marley.txt",
    }


async def test_another_embedder_recomputes_the_vectors(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        report = await rag.import_graph(LIGHTRAG_WD, source="lightrag")
        assert (await rag.check()).ok
    assert report.vectors_reused == 0
    assert any("another embedder" in w for w in report.warnings)


async def test_a_deleted_document_takes_only_its_own_fragments(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        report = await rag.import_graph(LIGHTRAG_WD, source="lightrag")
        marley = next(
            d["id"] for d in (await rag.documents())["documents"] if d["path"] == "marley.txt"
        )
        await rag.delete([marley])
        assert (await rag.check()).ok
        scrooge = await rag.storage.graph.get_node("Scrooge")
    assert len(report.documents) == 3
    assert "Scrooge: And Scrooge's name" not in scrooge["description"]
    assert "Scrooge: Dick Wilkins, a fellow apprentice of Scrooge's." in scrooge["description"]


async def test_not_a_lightrag_folder_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    broken = tmp_path / "broken"
    shutil.copytree(LIGHTRAG_WD, broken)
    (broken / "graph_chunk_entity_relation.graphml").write_text(
        '<?xml version="1.0"?><!DOCTYPE g [<!ENTITY x "boom">]><graphml>&x;</graphml>'
    )
    async with KGRag(settings(tmp_path / "idx")) as rag:
        with pytest.raises(ImportFormatError, match="kv_store_text_chunks"):
            await rag.import_graph(tmp_path / "empty", source="lightrag")
        with pytest.raises(ImportFormatError, match="not a folder"):
            await rag.import_graph(tmp_path / "nothing", source="lightrag")
        with pytest.raises(ImportFormatError, match="DOCTYPE"):
            await rag.import_graph(broken, source="lightrag")
        assert (await rag.documents())["total"] == 0
