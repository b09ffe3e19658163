"""The simple JSONL formats: questions with gold, answers to compare, passages.

Questions, one JSON object a line (blank lines are skipped)::

    {"question": "Who wrote it?", "answers": ["Dickens"], "gold": ["carol.txt"]}

``question`` is required; ``answers`` (a list of strings, or one string)
serves ``kgrag eval answers``; ``gold`` lists the keys of the passages that
answer it (a passage key, a document's file path, path relative to the
indexed folder, or id) and serves ``kgrag eval recall``; ``id`` is optional.

Answers (``kgrag eval compare``)::

    {"question": "Who wrote it?", "answer": "Charles Dickens wrote it."}

Passages (``--passages``): a JSON object ``{key: text}``, or one
``{"key": ..., "text": ...}`` object a line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kgrag.errors import ConfigError
from kgrag.evaluation.files import jsonl_objects, looks_like_jsonl, parse_json, read_text
from kgrag.evaluation.gold import GoldQuestion


@dataclass(frozen=True, slots=True)
class AnswerRow:
    """One answer to one question (a line of an answers file, or a generated answer)."""

    question: str
    answer: str


def _text(path: Path, number: int, row: dict[str, object], name: str) -> str:
    value = row.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f'{path}:{number}: "{name}" must be a non-empty string')
    return value.strip()


def _strings(path: Path, number: int, row: dict[str, object], name: str) -> tuple[str, ...]:
    value = row.get(name, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f'{path}:{number}: "{name}" must be a list of strings')
    return tuple(v for v in value if v.strip())


def gold_questions(path: Path, text: str) -> list[GoldQuestion]:
    """The questions of a JSONL gold file (``text`` is its content)."""
    out = []
    for number, row in jsonl_objects(path, text):
        question = _text(path, number, row, "question")
        gold = frozenset(_strings(path, number, row, "gold"))
        answers = _strings(path, number, row, "answers")
        out.append(GoldQuestion(question, gold, answers, str(row.get("id", ""))))
    if not out:
        raise ConfigError(f"{path}: no questions in the file")
    return out


def answer_rows(path: Path) -> list[AnswerRow]:
    """The answers of an answers file; a question asked twice is an error."""
    rows: list[AnswerRow] = []
    first_line: dict[str, int] = {}
    for number, row in jsonl_objects(path, read_text(path)):
        question = _text(path, number, row, "question")
        answer = row.get("answer")
        if not isinstance(answer, str):
            raise ConfigError(f'{path}:{number}: "answer" must be a string')
        if question in first_line:
            raise ConfigError(f"{path}:{number}: the question of line {first_line[question]} again")
        first_line[question] = number
        rows.append(AnswerRow(question, answer))
    if not rows:
        raise ConfigError(f"{path}: no answers in the file")
    return rows


def passages_file(path: Path) -> dict[str, str]:
    """A passages file: ``{key: text}`` JSON, or JSONL lines ``{"key": ..., "text": ...}``."""
    text = read_text(path)
    rows = list(jsonl_objects(path, text)) if looks_like_jsonl(text) else []
    if len(rows) > 1 or (rows and "key" in rows[0][1]):
        return {_text(path, n, row, "key"): _text(path, n, row, "text") for n, row in rows}
    data = parse_json(path, text)
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ConfigError(f'{path}: expected {{"key": "text", ...}} or JSONL key/text lines')
    return {str(k): v for k, v in data.items()}
