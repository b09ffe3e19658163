"""The export as CSV: one file per table (entities, relations, chunks, documents).

UTF-8 without a byte-order mark, a header row, ``\\n`` line ends, fields
quoted only when they must be (the stdlib :mod:`csv` dialect ``excel``).
Each column has one kind, the one that holds all its values (as in
GraphML and Parquet): strings are written as they are, numbers as Python
prints them (a column mixing integers and reals as reals), booleans as
``true`` / ``false``, lists of strings joined with ``<SEP>``; mappings,
nested lists and columns of mixed kinds as JSON. An empty cell is
a missing value (or an empty list).
"""

from __future__ import annotations

import csv
from pathlib import Path

from kgrag.maintenance.export_records import ExportData, tables
from kgrag.maintenance.exports.tables import LEAD, as_text, column_kind, columns, replacing


def cell(value: object, kind: str) -> str:
    """One CSV cell of a column of ``kind``."""
    return "" if value is None else as_text(value, kind)


def write_csv(data: ExportData, folder: Path) -> list[Path]:
    """``folder``/entities.csv, relations.csv, chunks.csv and documents.csv."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    by_name = tables(data)
    for table, lead in LEAD.items():
        rows = by_name[table]
        header = columns(rows, lead)
        kinds = [column_kind(row.get(c) for row in rows) for c in header]
        path = folder / f"{table}.csv"
        with replacing(path) as out:
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(header)
            writer.writerows(
                [cell(row.get(c), k) for c, k in zip(header, kinds, strict=True)] for row in rows
            )
        written.append(path)
    return written
