"""The export as Parquet tables in GraphRAG's shapes (entities, relationships, ...).

Four files, named and shaped like GraphRAG's index outputs so that tools
written for those read them: ``entities.parquet`` (id, human_readable_id,
title, type, description, text_unit_ids, frequency, degree),
``relationships.parquet`` (id, human_readable_id, source, target,
description, weight, combined_degree, text_unit_ids), ``text_units.parquet``
(id, human_readable_id, text, n_tokens, document_id, document_ids,
entity_ids, relationship_ids) and ``documents.parquet`` (id,
human_readable_id, title, text, text_unit_ids, creation_date, metadata).
Every other kgrag field follows as its own column (sorted; ``kgrag_``
prefixed where the name is taken), typed from its values: mappings and
nested lists as JSON text. pyarrow is imported only here, and only when a
Parquet export is asked for.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from types import ModuleType

from kgrag.errors import ConfigError
from kgrag.ingest.ids import entity_vector_id, relation_vector_id
from kgrag.maintenance.export_records import ExportData, ExportDocument
from kgrag.maintenance.exports.tables import IMPORT_ONLY, column_kind, degrees

INSTALL_HINT = "Parquet export needs pyarrow: pip install 'kgrag[parquet]'"

Row = dict[str, object]
Table = tuple[list[str], list[Row]]  # the GraphRAG columns, then the rows

# GraphRAG's columns and their kinds (see tables.value_kind)
_GRAPHRAG = {
    "entities": {
        "id": "str",
        "human_readable_id": "int",
        "title": "str",
        "type": "str",
        "description": "str",
        "text_unit_ids": "strlist",
        "frequency": "int",
        "degree": "int",
    },
    "relationships": {
        "id": "str",
        "human_readable_id": "int",
        "source": "str",
        "target": "str",
        "description": "str",
        "weight": "float",
        "combined_degree": "int",
        "text_unit_ids": "strlist",
    },
    "text_units": {
        "id": "str",
        "human_readable_id": "int",
        "text": "str",
        "n_tokens": "int",
        "document_id": "str",
        "document_ids": "strlist",
        "entity_ids": "strlist",
        "relationship_ids": "strlist",
    },
    "documents": {
        "id": "str",
        "human_readable_id": "int",
        "title": "str",
        "text": "str",
        "text_unit_ids": "strlist",
        "creation_date": "str",
        "metadata": "json",
    },
}


@dataclass
class Texts:
    """Chunk and document texts: GraphRAG's tables carry them, the JSON export does not."""

    chunks: dict[str, str] = field(default_factory=dict)
    documents: dict[str, str] = field(default_factory=dict)


def require_pyarrow() -> tuple[ModuleType, ModuleType]:
    """``(pyarrow, pyarrow.parquet)``, or a ConfigError that names the extra to install."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ConfigError(INSTALL_HINT) from exc
    return pa, pq


def _with_extras(row: Row, item: Mapping[str, object], used: set[str]) -> Row:
    for key in sorted(item.keys() - used - IMPORT_ONLY):
        row[key if key not in row else f"kgrag_{key}"] = item[key]
    return row


def entities(data: ExportData) -> list[Row]:
    """GraphRAG's entity rows; ``frequency``: the chunks naming the entity."""
    degree = degrees(data["relations"])
    used = {"name", "entity_type", "description", "source_ids"}
    return [
        _with_extras(
            {
                "id": entity_vector_id(e["name"]),
                "human_readable_id": i,
                "title": e["name"],
                "type": e.get("entity_type"),
                "description": e.get("description"),
                "text_unit_ids": list(e.get("source_ids") or []),
                "frequency": len(e.get("source_ids") or []),
                "degree": degree[e["name"]],
            },
            e,
            used,
        )
        for i, e in enumerate(data["entities"])
    ]


def relationships(data: ExportData) -> list[Row]:
    """GraphRAG's relationship rows; ``combined_degree``: the endpoints' degrees summed."""
    degree = degrees(data["relations"])
    used = {"src", "tgt", "description", "weight", "source_ids"}
    return [
        _with_extras(
            {
                "id": relation_vector_id(r["src"], r["tgt"]),
                "human_readable_id": i,
                "source": r["src"],
                "target": r["tgt"],
                "description": r.get("description"),
                "weight": r.get("weight"),
                "combined_degree": degree[r["src"]] + degree[r["tgt"]],
                "text_unit_ids": list(r.get("source_ids") or []),
            },
            r,
            used,
        )
        for i, r in enumerate(data["relations"])
    ]


def _strings(value: object) -> list[str]:
    """A stored list of strings (a chunk's source ids); anything else is empty."""
    return [str(v) for v in value] if isinstance(value, list) else []


def _mentions(items: Sequence[Mapping[str, object]], ids: list[str]) -> dict[str, list[str]]:
    """Per chunk id, the ids (in ``ids``' order) of the items whose sources hold it."""
    out: dict[str, list[str]] = defaultdict(list)
    for item, item_id in zip(items, ids, strict=True):
        for chunk in _strings(item.get("source_ids")):
            out[chunk].append(item_id)
    return out


def text_units(data: ExportData, texts: Texts) -> list[Row]:
    """GraphRAG's text unit rows: the chunks, their texts and what was found in them."""
    ents = _mentions(data["entities"], [entity_vector_id(e["name"]) for e in data["entities"]])
    rel_ids = [relation_vector_id(r["src"], r["tgt"]) for r in data["relations"]]
    rels = _mentions(data["relations"], rel_ids)
    used = {"id", "tokens", "doc_id", "doc_ids", "content"}
    return [
        _with_extras(
            {
                "id": c["id"],
                "human_readable_id": i,
                "text": c["content"] if c.get("content") is not None else texts.chunks.get(c["id"]),
                "n_tokens": c.get("tokens"),
                "document_id": c.get("doc_id"),
                "document_ids": list(c.get("doc_ids") or []),
                "entity_ids": ents.get(c["id"], []),
                "relationship_ids": rels.get(c["id"], []),
            },
            c,
            used,
        )
        for i, c in enumerate(data["chunks"])
    ]


def _created(doc: ExportDocument) -> str | None:
    when = doc.get("updated_at")
    return None if when is None else dt.datetime.fromtimestamp(when, dt.UTC).isoformat()


def documents(data: ExportData, texts: Texts) -> list[Row]:
    """GraphRAG's document rows; ``creation_date``: when kgrag last indexed it (UTC)."""
    units: dict[str | None, list[tuple[int, str]]] = defaultdict(list)
    for c in data["chunks"]:
        owners: Sequence[str | None] = c.get("doc_ids") or [c.get("doc_id")]
        for doc in owners:
            units[doc].append((c.get("order") or 0, c["id"]))
    used = {"id", "metadata", "updated_at"}
    return [
        _with_extras(
            {
                "id": d["id"],
                "human_readable_id": i,
                "title": PurePath(d.get("file_path") or d.get("source") or d["id"]).name,
                "text": texts.documents.get(d["id"]),
                "text_unit_ids": [cid for _, cid in sorted(units.get(d["id"], []))],
                "creation_date": _created(d),
                "metadata": d.get("metadata"),
            },
            d,
            used,
        )
        for i, d in enumerate(data["documents"])
    ]


def _arrow_type(pa: ModuleType, kind: str) -> object:
    simple = {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64()}
    if kind == "strlist":
        return pa.list_(pa.string())
    return simple.get(kind, pa.string())


def _arrow_value(value: object, kind: str) -> object:
    if value is None:
        return None
    if kind == "json":
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    if kind != "float":
        return value
    return value if isinstance(value, float) else float(str(value))


def arrow_table(pa: ModuleType, rows: list[Row], fixed: dict[str, str]) -> object:
    """The rows as a pyarrow Table: GraphRAG's columns first, then the rest sorted."""
    names = list(fixed) + sorted({k for row in rows for k in row} - set(fixed))
    kinds = {n: fixed.get(n) or column_kind(r.get(n) for r in rows) for n in names}
    schema = pa.schema([(n, _arrow_type(pa, kinds[n])) for n in names])
    columns = {n: [_arrow_value(r.get(n), kinds[n]) for r in rows] for n in names}
    return pa.table(columns, schema=schema)


def write_parquet(data: ExportData, folder: Path, texts: Texts) -> list[Path]:
    """``folder``/entities, relationships, text_units and documents ``.parquet``."""
    pa, pq = require_pyarrow()
    folder.mkdir(parents=True, exist_ok=True)
    tables = {
        "entities": entities(data),
        "relationships": relationships(data),
        "text_units": text_units(data, texts),
        "documents": documents(data, texts),
    }
    written = []
    for name, rows in tables.items():
        path, tmp = folder / f"{name}.parquet", folder / f".{name}.parquet.tmp"
        pq.write_table(arrow_table(pa, rows, _GRAPHRAG[name]), tmp)
        os.replace(tmp, path)
        written.append(path)
    return written
