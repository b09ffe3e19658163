"""Reading the JSON and JSONL files of an evaluation, with one-line errors that name the line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from kgrag.errors import ConfigError


def read_text(path: Path) -> str:
    """The file's text; a missing or unreadable file is a :class:`ConfigError`."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc})") from exc


def parse_json(path: Path, text: str) -> object:
    """``text`` (the content of ``path``) as JSON; a syntax error names its line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None


def read_json(path: Path) -> object:
    """The JSON document in ``path``."""
    return parse_json(path, read_text(path))


def jsonl_objects(path: Path, text: str) -> Iterator[tuple[int, dict[str, object]]]:
    """(line number, object) for every non-blank line of ``text``; anything else an error."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
        if not isinstance(value, dict):
            raise ConfigError(f"{path}:{number}: expected a JSON object, got {_kind(value)}")
        yield number, value


def looks_like_jsonl(text: str) -> bool:
    """Whether the first non-blank line is a JSON object on its own (a JSONL file)."""
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    if not first.lstrip().startswith("{"):
        return False
    try:
        return isinstance(json.loads(first), dict)
    except json.JSONDecodeError:
        return False


def _kind(value: object) -> str:
    return {list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )
