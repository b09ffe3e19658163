"""Reading the text cells of the CSV and GraphML exports back into JSON values.

The rule restated from docs/export.md, independently of the writers: each
column has one kind, the one that holds all its values; integers mixed with
reals are reals; any other mix, and anything that is neither a scalar nor
a list of strings, is JSON text; lists of strings are joined with <SEP>.
"""

from __future__ import annotations

import json
from typing import Any

SEP = "<SEP>"


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return type(value).__name__
    if isinstance(value, str):
        return "str"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "strlist"
    return "json"


def kinds(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Per field of ``rows``, its column kind."""
    seen: dict[str, set[str]] = {}
    for row in rows:
        for key, value in row.items():
            seen.setdefault(key, set())
            if value is not None:
                seen[key].add(_kind(value))
    out = {}
    for key, found in seen.items():
        if found == {"int", "float"}:
            found = {"float"}
        out[key] = found.pop() if len(found) == 1 else ("json" if found else "str")
    return out


def decode(text: str, kind: str) -> Any:
    """A text cell of a column of ``kind`` as the JSON value it was written from."""
    if kind == "json":
        return json.loads(text)
    if kind == "strlist":
        return text.split(SEP) if text else []
    if kind == "bool":
        return {"true": True, "false": False}[text]
    if kind == "int":
        return int(text)
    return float(text) if kind == "float" else text


def decoded(row: dict[str, Any], kind: dict[str, str]) -> dict[str, Any]:
    """A row of text cells (empty: missing) decoded column by column."""
    return {
        k: decode(v, kind[k]) for k, v in row.items() if v != "" or kind[k] in ("str", "strlist")
    }


def as_read(row: dict[str, Any], kind: dict[str, str]) -> dict[str, Any]:
    """What a reader of text cells gets back for a JSON row: a missing string is
    empty, a missing list of strings is an empty list, other missing values are absent."""
    empty = {"str": "", "strlist": []}
    out = {}
    for key, k in kind.items():
        value = row.get(key)
        if value is None and k in empty:
            value = empty[k]
        if value is not None:
            out[key] = value
    return out
