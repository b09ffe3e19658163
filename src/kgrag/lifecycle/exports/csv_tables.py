"""The export as CSV: one file per table (entities, relations, chunks, documents).

UTF-8 without a byte-order mark, a header row, ``\\n`` line ends, fields
quoted only when they must be (the stdlib :mod:`csv` dialect ``excel``).
A cell holds a string as it is, a number as Python prints it, a boolean as
``true`` / ``false``, a list of strings joined with ``<SEP>`` and anything
else (a mapping, a list of pairs) as compact JSON; an empty cell is a
missing value or an empty list.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from kgrag.lifecycle.exports.tables import LEAD, as_text, columns, replacing, value_kind


def cell(value: Any) -> str:
    """One CSV cell: the value's own kind decides how it is written."""
    return "" if value is None else as_text(value, value_kind(value))


def write_csv(data: dict[str, Any], folder: Path) -> list[Path]:
    """``folder``/entities.csv, relations.csv, chunks.csv and documents.csv."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for table, lead in LEAD.items():
        rows = data[table]
        header = columns(rows, lead)
        path = folder / f"{table}.csv"
        with replacing(path) as out:
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(header)
            writer.writerows([cell(row.get(c)) for c in header] for row in rows)
        written.append(path)
    return written
