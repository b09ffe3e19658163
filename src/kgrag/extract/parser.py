"""Parse model output into an :class:`~kgrag.types.Extraction`.

The parsers never raise on model output, whatever it is: unusable rows
are dropped with a warning in ``Extraction.warnings``.

Delimited output is repaired before it is read: mangled field delimiters
(``<|#>``, ``<#|>``, ``<||>``, ``|#|``, the older ``<|>``, full-width
forms, or a bare ``|`` throughout a row), completion markers in any case
or bracket style, records run together on one line (separated by the
delimiter or ``##``), and rows wrapped in quotes, parentheses, backticks
or list bullets. An ``entity``
row with relation-shaped fields is read as a relation; a relation row
may carry a numeric weight as a sixth field (default 1.0), and may leave
out its keywords when the remaining field reads as a description.

JSON output is read with ``json_repair``, which copes with code fences,
trailing commas, single quotes, truncation and prose around the object.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

import json_repair

from kgrag.extract.formats import FORMATS, TUPLE_DELIMITER
from kgrag.extract.normalize import is_number
from kgrag.extract.records import RecordCollector, snippet
from kgrag.types import Extraction

D = TUPLE_DELIMITER
_L, _P, _H, _R = "[<\uff1c]", "[|\uff5c]", "[#\uff03]+", "[>\uff1e]"
_DELIM_VARIANTS = re.compile(
    f"{_L}[ \\t]*{_P}[ \\t]*{_H}[ \\t]*{_P}[ \\t]*{_R}"  # <|#|>, also with spaces
    f"|{_L}?{_P}{_H}{_P}{_R}?"                   # |#|, <|#|, |#|>
    f"|{_L}{_P}?{_H}{_P}?{_R}"                   # <|#>, <#|>, <#>
    f"|{_L}{_P}{{1,2}}{_R}"                      # <|>, <||>
)
_COMPLETE = re.compile(f"(?:{_L}[ \\t]*)?{_P}[ \\t]*complete[ \\t]*{_P}[ \\t]*{_R}?"
                       f"|{_L}[ \\t]*{_P}?[ \\t]*complete[ \\t]*{_P}?[ \\t]*{_R}",
                       re.IGNORECASE)
_TAG = r"""[\s("'`]*(?:entity|entities|relation|relationship|relations|relationships)["'`]?\s*"""
_RUN_ON = re.compile(f"{re.escape(D)}(?={_TAG}{re.escape(D)})", re.IGNORECASE)
_HASH_SEP = re.compile(f"##\\s*(?={_TAG}{re.escape(D)})|\\)\\s*(?=\\({_TAG}{re.escape(D)})",
                       re.IGNORECASE)
_PIPE_ROW = re.compile(r"""["'`(]*(?:entity|relation|relationship)["'`]?[ \t]*\|[^|]*\|""",
                       re.IGNORECASE)
_SENTENCE_END = (".", "\u3002", "!", "\uff01", "?", "\uff1f")
_BULLET = re.compile(r"^(?:[-*\u2022+]|\d{1,3}[.)])\s+")
_BRACKETS = re.compile(r"[\[\]{}]")
MAX_JSON_DEPTH = 64
_FENCE_LINE = re.compile(r"^\s*`{3,}[\w-]*\s*$")
_ENTITY_TAGS = {"entity", "entities", "node"}
_RELATION_TAGS = {"relation", "relationship", "relations", "relationships", "edge"}
_IGNORED_TAGS = {"content_keywords", "keywords"}


def _repair(text: str) -> tuple[str, bool]:
    """Canonical delimiters; text cut at the completion marker (and whether one was seen)."""
    text = _DELIM_VARIANTS.sub(D, text)
    match = _COMPLETE.search(text)
    return (text[: match.start()], True) if match else (text, False)


def _split_records(body: str) -> list[str]:
    """One string per record: lines, further split where records run together."""
    records: list[str] = []
    for line in body.split("\n"):
        if _FENCE_LINE.match(line):
            continue
        for part in _HASH_SEP.split(line):
            records.extend(_RUN_ON.split(part))
    return records


def _unwrap(record: str) -> str:
    """Strip bullets, backticks, wrapping parentheses and trailing separators."""
    record = _BULLET.sub("", record.strip()).strip()
    record = record.strip("`").strip()
    if record.endswith("##"):
        record = record[:-2].rstrip()
    if record.startswith("("):  # tuple style: ("entity"<|#|>...)  or  (...),
        if record.endswith(("),", ");")):
            record = record[:-1]
        if record.endswith(")"):
            record = record[1:-1].strip()
    return record


def _field(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        value = value[1:-1]
    return value.strip()


def _sentence_like(text: str) -> bool:
    """Whether a lone field reads as a description rather than a keyword list."""
    text = text.strip()
    if text.endswith(_SENTENCE_END) or len(text.split()) >= 6:
        return True
    return " " not in text and "," not in text and len(text) >= 12


def _add_row(fields: list[str], out: RecordCollector, row: str) -> None:
    """Dispatch one split row by its tag and field count."""
    tag = fields[0].strip("\"'`()[] ").casefold()
    values, n = fields[1:], len(fields) - 1
    is_entity, is_relation = tag in _ENTITY_TAGS, tag in _RELATION_TAGS
    weighted = n == 5 and is_number(values[4])
    if is_entity and n == 3:
        out.add_entity(*values, row=row)
    elif (is_entity or is_relation) and (n == 4 or weighted):
        # an "entity" row shaped like a relation is read as one
        out.add_relation(*values[:4], weight=values[4] if weighted else None, row=row)
    elif is_relation and n == 5:
        out.warn(f"ignored a sixth field that is not a weight: {snippet(values[4], 40)}")
        out.add_relation(*values[:4], row=row)
    elif is_relation and n == 3 and _sentence_like(values[2]):  # keywords left out
        out.add_relation(values[0], values[1], "", values[2], row=row)
    elif is_entity or is_relation:
        out.warn(f"dropped {tag} row with {n} fields: {snippet(row)}")
    elif tag not in _IGNORED_TAGS:
        out.warn(f"dropped row of unknown kind {snippet(fields[0], 30)!r}: {snippet(row)}")


def parse_delimited(text: str, chunk_id: str = "", file_path: str = "",
                    entity_types: Sequence[str] | None = None) -> Extraction:
    """Parse the delimited record format; see the module docstring."""
    out = RecordCollector(chunk_id, file_path, entity_types)
    try:
        body, complete = _repair(text if isinstance(text, str) else "")
        if not complete:
            out.warn("no completion marker: the output may have been cut off")
        for record in _split_records(body):
            record = _unwrap(record)
            if D in record:
                _add_row([_field(f) for f in record.split(D)], out, record)
            elif _PIPE_ROW.match(record):  # plain "|" used as the delimiter
                _add_row([_field(f) for f in record.split("|")], out, record)
    except Exception as exc:  # a safety net: parsing model output must never raise
        out.warn(f"delimited parser failed: {exc!r}")
    return out.finish()


def _too_deep(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether brackets nest deeper than any real answer would (repair gets slow)."""
    depth = 0
    for match in _BRACKETS.finditer(text):
        depth += 1 if match.group() in "{[" else -1
        if depth > limit:
            return True
    return False


def _load_json(text: str, out: RecordCollector) -> Any:
    """The JSON value in ``text``, repaired if need be; ``None`` if there is none."""
    if _too_deep(text):
        out.warn("brackets nest too deeply to be an extraction answer")
        return None
    found = None
    for opener in "{[":
        start = text.find(opener)
        if start < 0:
            continue
        candidate = text[start:].rstrip()
        if candidate.endswith("```"):
            candidate = candidate.rstrip("`")
        try:
            found, repaired = json.loads(candidate), False
        except ValueError:
            found, repaired = json_repair.loads(candidate), True
        if any(_json_items(found)):
            if repaired:
                out.warn("repaired malformed JSON (extra text, bad syntax or truncation)")
            return found
    return found


def _section(data: dict, names: tuple[str, ...]) -> list:
    for key, value in data.items():
        if isinstance(key, str) and key.strip().casefold() in names:
            if isinstance(value, list):
                return value
            return [value] if value else []
    return []


def _get(item: dict, *names: str) -> Any:
    for name in names:
        if name in item:
            return item[name]
    return None


def _json_items(data: Any) -> tuple[list, list]:
    if isinstance(data, dict):
        ents = _section(data, ("entities", "entity", "nodes"))
        rels = _section(data, ("relationships", "relations", "relationship", "relation", "edges"))
        return ents, rels
    if isinstance(data, list):  # a bare list: sort items by their keys
        rels = [i for i in data if isinstance(i, dict) and "source" in i]
        return [i for i in data if not (isinstance(i, dict) and "source" in i)], rels
    return [], []


def parse_json(text: str, chunk_id: str = "", file_path: str = "",
               entity_types: Sequence[str] | None = None) -> Extraction:
    """Parse the JSON record format; see the module docstring."""
    out = RecordCollector(chunk_id, file_path, entity_types)
    try:
        data = _load_json(text if isinstance(text, str) else "", out)
        entities, relations = _json_items(data)
        if not isinstance(data, (dict, list)):
            out.warn("no JSON object found in the output")
        for item in entities:
            if not isinstance(item, dict):
                out.warn(f"dropped entity item that is not an object: {snippet(item)}")
                continue
            out.add_entity(_get(item, "name", "entity_name", "entity"),
                           _get(item, "type", "entity_type"),
                           _get(item, "description", "entity_description"), row=item)
        for item in relations:
            if not isinstance(item, dict):
                out.warn(f"dropped relation item that is not an object: {snippet(item)}")
                continue
            out.add_relation(_get(item, "source", "src", "source_entity", "src_id"),
                             _get(item, "target", "tgt", "target_entity", "tgt_id"),
                             _get(item, "keywords", "relationship_keywords", "keyword"),
                             _get(item, "description", "relationship_description"),
                             weight=_get(item, "weight", "strength", "relationship_strength"),
                             row=item)
    except Exception as exc:  # a safety net: parsing model output must never raise
        out.warn(f"JSON parser failed: {exc!r}")
    return out.finish()


_PARSERS = {"delimited": parse_delimited, "json": parse_json}


def parse_extraction(text: str, fmt: str = "delimited", chunk_id: str = "",
                     file_path: str = "", entity_types: Sequence[str] | None = None) -> Extraction:
    """Parse in the declared format; if that yields nothing, try the other one."""
    fmt = fmt if fmt in FORMATS else "delimited"
    first = _PARSERS[fmt](text, chunk_id, file_path, entity_types)
    if first.entities or first.relations:
        return first
    other = "json" if fmt == "delimited" else "delimited"
    second = _PARSERS[other](text, chunk_id, file_path, entity_types)
    if second.entities or second.relations:
        second.warnings.insert(0, f"output was in {other} format, not {fmt}")
        return second
    return first
