"""What every export format shares: column order, value kinds, degrees, safe writes.

The formats are views of the canonical JSON export
(:func:`kgrag.maintenance.export.export_graph`): the same rows, flattened
the same way, so that a CSV cell, a GraphML ``<data>`` element and a Parquet
value say what the JSON says.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from kgrag.maintenance.export_records import ExportRelation

SEP = "<SEP>"  # joins lists of strings in one text cell, as LightRAG does

# Per table of the export: the columns that always come first, in this order;
# any other field of its rows follows, sorted by name.
LEAD: dict[str, tuple[str, ...]] = {
    "entities": ("name", "entity_type", "description", "source_ids", "file_paths"),
    "relations": (
        "src",
        "tgt",
        "weight",
        "keywords",
        "description",
        "source_ids",
        "file_paths",
    ),
    "chunks": ("id", "doc_id", "order", "tokens", "file_path", "doc_ids", "location"),
    "documents": ("id", "file_path", "source", "status", "disabled", "content_hash", "metadata"),
}


# Fields of the JSON export that only ``kgrag import --from kgrag`` needs (a chunk's
# stored extraction): the other formats, written for other tools, leave them out.
IMPORT_ONLY = frozenset({"facts"})


def columns(rows: Sequence[Mapping[str, object]], lead: Iterable[str]) -> list[str]:
    """``lead`` then every other key the rows hold, sorted: a stable header."""
    first = list(lead)
    rest = sorted({k for row in rows for k in row} - set(first) - IMPORT_ONLY)
    return first + rest


def value_kind(value: object) -> str:
    """One of bool, int, float, str, strlist (a list of strings) or json (anything else)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "strlist"
    return "json"


def column_kind(values: Iterable[object]) -> str:
    """The one kind that holds every non-null value of a column (mixed ones: json)."""
    kinds = {value_kind(v) for v in values if v is not None}
    if kinds == {"int", "float"}:
        return "float"
    if len(kinds) == 1:
        return kinds.pop()
    return "str" if not kinds else "json"


def as_text(value: object, kind: str) -> str:
    """A non-null value as text for a column of ``kind`` (CSV cells, GraphML data)."""
    if kind == "json" or value_kind(value) == "json":
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if kind == "float":
        return repr(value if isinstance(value, float) else float(str(value)))
    if isinstance(value, list):
        return SEP.join(value)
    return str(value)


def degrees(relations: Sequence[ExportRelation]) -> Counter[str]:
    """Each entity's number of relations (a self-loop counts twice, as in NetworkX)."""
    counts: Counter[str] = Counter()
    for rel in relations:
        counts[rel["src"]] += 1
        counts[rel["tgt"]] += 1
    return counts


@contextmanager
def replacing(path: Path) -> Iterator[TextIO]:
    """A text file that replaces ``path`` only once fully written (no half exports)."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with tmp.open("w", encoding="utf-8", newline="") as out:
            yield out
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
