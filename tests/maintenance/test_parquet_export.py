"""Parquet in GraphRAG's table shapes, read back with pyarrow and pandas."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from kgrag.api.facade import KGRag
from kgrag.maintenance.exports import write
from kgrag.maintenance.exports.parquet import Texts
from tests.indexing.lifecycle_corpus import lifecycle_settings

from .conftest import AWKWARD, export_files

COLUMNS = {
    "entities": [
        "id",
        "human_readable_id",
        "title",
        "type",
        "description",
        "text_unit_ids",
        "frequency",
        "degree",
    ],
    "relationships": [
        "id",
        "human_readable_id",
        "source",
        "target",
        "description",
        "weight",
        "combined_degree",
        "text_unit_ids",
    ],
    "text_units": [
        "id",
        "human_readable_id",
        "text",
        "n_tokens",
        "document_id",
        "document_ids",
        "entity_ids",
        "relationship_ids",
    ],
    "documents": [
        "id",
        "human_readable_id",
        "title",
        "text",
        "text_unit_ids",
        "creation_date",
        "metadata",
    ],
}


def read(folder: Path) -> dict[str, list[dict[str, Any]]]:
    tables = {name: pq.read_table(folder / f"{name}.parquet") for name in COLUMNS}
    for name, table in tables.items():
        assert table.column_names[: len(COLUMNS[name])] == COLUMNS[name], name
    return {name: table.to_pylist() for name, table in tables.items()}


async def stored_texts(rag: KGRag, namespace: str) -> dict[str, str]:
    kv = rag.storage.kv(namespace)
    keys = await kv.keys()
    return {k: r["content"] for k, r in zip(keys, await kv.get_many(keys), strict=True) if r}


def assert_graph_tables(data: dict[str, Any], t: dict[str, list[dict[str, Any]]]) -> None:
    degree = Counter(n for r in data["relations"] for n in (r["src"], r["tgt"]))
    ents = {e["title"]: e for e in t["entities"]}
    assert list(ents) == [e["name"] for e in data["entities"]]
    for entity in data["entities"]:
        row = ents[entity["name"]]
        assert row["type"] == entity["entity_type"] and row["description"] == entity["description"]
        assert row["text_unit_ids"] == entity["source_ids"]
        assert row["frequency"] == len(entity["source_ids"])
        assert row["degree"] == degree[entity["name"]]
    pairs = [(r["source"], r["target"]) for r in t["relationships"]]
    assert pairs == [(r["src"], r["tgt"]) for r in data["relations"]]
    for row, rel in zip(t["relationships"], data["relations"], strict=True):
        assert row["weight"] == rel["weight"] and isinstance(row["weight"], float)
        assert row["text_unit_ids"] == rel["source_ids"]
        assert row["combined_degree"] == degree[rel["src"]] + degree[rel["tgt"]]
    ids = {e["title"]: e["id"] for e in t["entities"]}
    units = {u["id"]: u for u in t["text_units"]}
    assert list(units) == [c["id"] for c in data["chunks"]]
    for entity in data["entities"]:  # every entity is listed in the units it came from
        assert all(ids[entity["name"]] in units[c]["entity_ids"] for c in entity["source_ids"])
    assert len({r["id"] for r in t["relationships"]}) == len(pairs)


async def test_the_index_as_graphrag_tables(index, exported, tmp_path):
    async with KGRag(lifecycle_settings(index)) as rag:
        written = await rag.export_to(tmp_path / "parquet", format="parquet", timestamps=False)
        chunks, docs = await stored_texts(rag, "text_chunks"), await stored_texts(rag, "full_docs")
    assert sorted(p.name for p in written) == sorted(f"{n}.parquet" for n in COLUMNS)
    tables = read(tmp_path / "parquet")
    assert_graph_tables(exported, tables)
    assert {u["id"]: u["text"] for u in tables["text_units"]} == chunks
    assert {d["id"]: d["text"] for d in tables["documents"]} == docs
    for doc in tables["documents"]:
        assert doc["creation_date"] is None  # no timestamps asked for
        owned = [c["id"] for c in exported["chunks"] if doc["id"] in c["doc_ids"]]
        assert sorted(doc["text_unit_ids"]) == sorted(owned) and owned
    frame = pd.read_parquet(tmp_path / "parquet" / "relationships.parquet")
    assert frame["weight"].dtype.kind == "f" and len(frame) == len(exported["relations"])


def test_awkward_values_and_kgrag_columns(tmp_path):
    texts = Texts(chunks={"chunk-a": "A text\x00with NUL"}, documents={"doc-1": "全文"})
    write(AWKWARD, tmp_path / "pq", "parquet", texts)
    tables = read(tmp_path / "pq")
    assert_graph_tables(AWKWARD, tables)
    by_title = {e["title"]: e for e in tables["entities"]}
    assert by_title["Ünïcödé — 🎄"]["aliases"] == ["U", "Unicode"]
    assert by_title["Ünïcödé — 🎄"]["manual"] is True and by_title["刘备"]["manual"] is None
    assert [e["rank"] for e in tables["entities"]] == [None, 3, None, None, None]
    assert json.loads(by_title["刘备"]["score"]) == 7  # a column of mixed kinds: JSON text
    assert json.loads(by_title["玄德"]["type_counts"]) == {"人物": 2, "Person": 1}
    units = {u["id"]: u for u in tables["text_units"]}
    assert units["chunk-a"]["text"] == "A text\x00with NUL" and units["chunk-b"]["text"] is None
    assert json.loads(units["chunk-a"]["location"])["section"] == ["1"]
    docs = {d["id"]: d for d in tables["documents"]}
    assert docs["doc-1"]["text_unit_ids"] == ["chunk-a", "chunk-b"]
    assert docs["doc-2"]["text_unit_ids"] == ["chunk-b"] and docs["doc-2"]["disabled"] is True
    assert json.loads(docs["doc-1"]["metadata"]) == {"lang": "zh", "tags": ["x"]}


def test_creation_date_is_the_indexing_time(index, tmp_path):
    export_files(index, tmp_path / "pq", "parquet", timestamps=True)
    for doc in pq.read_table(tmp_path / "pq" / "documents.parquet").to_pylist():
        when = dt.datetime.fromisoformat(doc["creation_date"])
        assert when.tzinfo is not None and abs(dt.datetime.now(dt.UTC) - when).days < 1
