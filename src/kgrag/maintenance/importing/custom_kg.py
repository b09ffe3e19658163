"""A user-built graph (LightRAG's ``insert_custom_kg`` shape) read into an import plan.

The input::

    {"chunks": [{"content", "source_id", "file_path"?}],
     "entities": [{"entity_name", "entity_type"?, "description"?, "source_id"?}],
     "relationships": [{"src_id", "tgt_id", "description"?, "keywords"?,
                        "weight"?, "source_id"?}]}

becomes one document (source ``kg:<name>``, so importing the same graph
again replaces it and deleting that document removes everything only it
supports) whose chunks are the given chunks, each carrying the entities
and relations whose ``source_id`` names it. Rows whose ``source_id``
names no given chunk (or is missing) go to a synthetic chunk per
``source_id``, whose text lists those rows, so they are searchable and
have a chunk to cite like every other key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kgrag.ingest.ids import source_doc_id
from kgrag.llm.tokenizer import Tokenizer
from kgrag.maintenance.importing.model import (
    ImportedChunk,
    ImportedDoc,
    ImportFormatError,
    ImportPlan,
)

UNLABELLED = "UNKNOWN"
KIND = "import"  # the extractor recorded on keys a user-built graph supports


def _text(item: Mapping[str, object], key: str, where: str, required: bool = False) -> str:
    value = item.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ImportFormatError(f"{where}: {key!r} is missing or empty")
        return ""
    if not isinstance(value, str | int | float):
        raise ImportFormatError(f"{where}: {key!r} must be a string")
    return str(value).strip()


def _items(data: Mapping[str, object], key: str) -> list[Mapping[str, object]]:
    items = data.get(key) or []
    if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
        raise ImportFormatError(f"{key!r} must be a list of objects")
    return items


def _weight(item: Mapping[str, object], where: str) -> float:
    value = item.get("weight")
    if value is None:
        return 1.0
    try:
        if isinstance(value, int | float | str):
            return float(value)
    except ValueError as exc:
        raise ImportFormatError(f"{where}: 'weight' must be a number") from exc
    raise ImportFormatError(f"{where}: 'weight' must be a number")


def _chunks(data: Mapping[str, object], tokenizer: Tokenizer) -> dict[str, ImportedChunk]:
    chunks: dict[str, ImportedChunk] = {}
    for i, item in enumerate(_items(data, "chunks")):
        where = f"chunks[{i}]"
        content = _text(item, "content", where, required=True)
        label = _text(item, "source_id", where) or f"chunk-{i}"
        if label in chunks:
            raise ImportFormatError(f"{where}: source_id {label!r} is given twice")
        chunks[label] = ImportedChunk(content, extractor=KIND, tokens=tokenizer.count(content))
    return chunks


def _synthetic(label: str, lines: list[str], tokenizer: Tokenizer) -> ImportedChunk:
    text = "\n".join([f"[{label}]", *lines])
    return ImportedChunk(text, extractor=KIND, tokens=tokenizer.count(text))


def read_custom_kg(data: object, name: str, tokenizer: Tokenizer) -> ImportPlan:
    """The plan of one user-built graph; ``name`` identifies it (``kg:<name>``)."""
    if not isinstance(data, Mapping):
        raise ImportFormatError(
            "a custom graph is a JSON object with chunks, entities, relationships"
        )
    chunks = _chunks(data, tokenizer)
    orphans: dict[str, list[tuple[str, list[Any]]]] = {}  # label -> [(kind, row)]

    def place(label: str, kind: str, row: list[Any]) -> None:
        target = chunks.get(label)
        if target is None:
            orphans.setdefault(label or UNLABELLED, []).append((kind, row))
        elif kind == "entity":
            target.entities.append(row)
        else:
            target.relations.append(row)

    for i, item in enumerate(_items(data, "entities")):
        where = f"entities[{i}]"
        row = [
            _text(item, "entity_name", where, required=True),
            _text(item, "entity_type", where) or UNLABELLED,
            _text(item, "description", where),
        ]
        place(_text(item, "source_id", where), "entity", row)
    for i, item in enumerate(_items(data, "relationships")):
        where = f"relationships[{i}]"
        src, tgt = (_text(item, k, where, required=True) for k in ("src_id", "tgt_id"))
        if src == tgt:
            raise ImportFormatError(f"{where}: a relation needs two different entities")
        row = [src, tgt, _text(item, "keywords", where), _text(item, "description", where)]
        place(_text(item, "source_id", where), "relation", [*row, _weight(item, where)])
    made = list(chunks.values())
    for label, rows in sorted(orphans.items()):
        lines = [
            f"{r[0]}: {r[2]}" if k == "entity" else f"{r[0]} - {r[1]}: {r[3]}" for k, r in rows
        ]
        chunk = _synthetic(label, lines, tokenizer)
        chunk.entities = [r for k, r in rows if k == "entity"]
        chunk.relations = [r for k, r in rows if k == "relation"]
        made.append(chunk)
    if not made:
        raise ImportFormatError("the custom graph has no chunks, entities or relationships")
    source = "kg:" + name
    doc = ImportedDoc(source_doc_id(source), name, made, source=source)
    return ImportPlan("kg", [doc])
