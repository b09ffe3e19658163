"""JSON and JSON Lines: records flattened into ``key.path[i]: value`` lines.

* A top-level object gives one record per key, a top-level array one per
  element, a ``.jsonl`` file one per non-blank line. (A ``.json`` file
  holding several values one after another is read as JSON Lines.)
* Each record is one table block whose rows are its leaves, one line
  each: ``order.items[2].sku: A-17``. Inside an array-element record the
  paths start below the element (``sku: A-17``).
* Paths stop :data:`MAX_DEPTH` levels below the record; what lies deeper is kept as
  compact JSON on its path's line. Empty objects and arrays read ``{}`` /
  ``[]``; ``null``, ``true`` and ``false`` as in JSON.
* A JSON Lines line that does not parse is skipped with a warning;
  a file none of whose lines parse is refused.
(Module named ``json_records`` so that it does not shadow :mod:`json`.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import PurePath

from kgrag.errors import LoaderError
from kgrag.ingest.blocks import BlockBuilder, Parsed
from kgrag.ingest.formats.tabular import NAME_SEP, Check

MAX_DEPTH = 16


def scalar_text(value: object) -> str:
    """A leaf as JSON writes it, strings without quotes."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def flatten(value: object, path: str = "", depth: int = 0) -> Iterator[tuple[str, str]]:
    """``(key path, text)`` of every leaf of ``value``, at most :data:`MAX_DEPTH` levels down."""
    if isinstance(value, dict | list) and value and depth >= MAX_DEPTH:
        yield path, scalar_text(value)
    elif isinstance(value, dict) and value:
        for key, inner in value.items():
            yield from flatten(inner, _join(path, str(key)), depth + 1)
    elif isinstance(value, list) and value:
        for i, inner in enumerate(value):
            yield from flatten(inner, f"{path}[{i}]", depth + 1)
    else:
        yield path, scalar_text(value)


def record_lines(value: object, path: str = "") -> list[tuple[str]]:
    """A record's table rows: one ``path: value`` line each (just the value at the root)."""
    return [(f"{p}{NAME_SEP}{text}" if p else text,) for p, text in flatten(value, path)]


def _records(data: object) -> Iterator[tuple[object, str]]:
    """``(value, path prefix)`` of each top-level record."""
    if isinstance(data, dict):
        yield from ((inner, str(key)) for key, inner in data.items())
    elif isinstance(data, list):
        yield from ((inner, "") for inner in data)
    else:
        yield data, ""


def _build(records: Iterator[tuple[object, str]], check: Check | None) -> BlockBuilder:
    builder = BlockBuilder()
    for n, (value, path) in enumerate(records):
        builder.table(record_lines(value, path))
        if check is not None and n % 64 == 0:
            check(builder.length)
    return builder


def _lines(text: str, warnings: list[str]) -> Iterator[object]:
    """The values of a JSON Lines text; lines that do not parse are counted in ``warnings``."""
    bad: list[int] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                bad.append(number)
    if bad:
        shown = ", ".join(map(str, bad[:5])) + (" ..." if len(bad) > 5 else "")
        warnings.append(f"JSON Lines: skipped {len(bad)} line(s) that are not JSON ({shown})")


def parse_jsonl(text: str, name: str = "<jsonl>", check: Check | None = None) -> Parsed:
    """Blocks and flat text of a JSON Lines file: one record per line."""
    warnings: list[str] = []
    try:
        parsed = _build(((v, "") for v in _lines(text, warnings)), check).build()
    except RecursionError as exc:
        raise LoaderError(name, "JSON nested too deeply to read") from exc
    if not parsed.blocks and warnings:
        raise LoaderError(name, "not JSON Lines: no line holds a JSON value")
    parsed.warnings = warnings
    return parsed


def parse_json(text: str, name: str = "<json>", check: Check | None = None) -> Parsed:
    """Blocks and flat text of a JSON document: one record per top-level key or element."""
    if PurePath(name).suffix.lower() in (".jsonl", ".ndjson"):
        return parse_jsonl(text, name, check)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":  # several values one after another: JSON Lines
            return parse_jsonl(text, name, check)
        raise LoaderError(name, f"invalid JSON: {exc}") from exc
    except RecursionError as exc:
        raise LoaderError(name, "JSON nested too deeply to read") from exc
    return _build(_records(data), check).build()
