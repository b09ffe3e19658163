"""CSV: entities.csv, relations.csv, chunks.csv and documents.csv, read back with pandas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from kgrag.maintenance.exports import write

from .conftest import AWKWARD, export_files
from .decode import as_read, decoded, kinds

TABLES = ("entities", "relations", "chunks", "documents")


def read_table(folder: Path, table: str) -> list[dict[str, Any]]:
    """A table as text cells: pandas with no type guessing and no NA values."""
    frame = pd.read_csv(folder / f"{table}.csv", dtype=str, keep_default_na=False)
    return frame.to_dict("records")


def assert_round_trip(data: dict[str, Any], folder: Path) -> None:
    for table in TABLES:
        rows = [{k: v for k, v in row.items() if k != "facts"} for row in data[table]]
        kind = kinds(rows)
        got = [decoded(row, kind) for row in read_table(folder, table)]
        assert got == [as_read(row, kind) for row in rows], table


def test_the_index_round_trips_through_pandas(index, exported, tmp_path):
    folder = tmp_path / "csv"
    written = export_files(index, folder, "csv")
    assert [p.name for p in written] == [f"{t}.csv" for t in TABLES]
    assert_round_trip(exported, folder)
    entities = pd.read_csv(folder / "entities.csv")
    assert list(entities["name"]) == [e["name"] for e in exported["entities"]]
    relations = pd.read_csv(folder / "relations.csv")
    assert relations["weight"].dtype.kind == "f"  # numbers are numbers to pandas
    pairs = list(zip(relations["src"], relations["tgt"], strict=True))
    assert pairs == [(r["src"], r["tgt"]) for r in exported["relations"]]
    chunks = pd.read_csv(folder / "chunks.csv")
    assert list(chunks["content"]) == [c["content"] for c in exported["chunks"]]
    assert "facts" not in chunks.columns  # the stored extractions stay in the JSON export


def test_awkward_values_survive(tmp_path):
    write(AWKWARD, tmp_path / "csv", "csv")
    assert_round_trip(AWKWARD, tmp_path / "csv")
    header = (tmp_path / "csv" / "entities.csv").read_text(encoding="utf-8").splitlines()[0]
    # the lead columns first, then the rest sorted
    lead = "name,entity_type,description,source_ids,file_paths"
    assert header == lead + ",aliases,manual,rank,score,type_counts"


def test_an_empty_graph_has_headers_only(tmp_path):
    empty = {**AWKWARD, "entities": [], "relations": [], "chunks": [], "documents": []}
    write(empty, tmp_path / "csv", "csv")
    frame = pd.read_csv(tmp_path / "csv" / "relations.csv")
    assert frame.empty and list(frame.columns)[:3] == ["src", "tgt", "weight"]
