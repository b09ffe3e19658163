"""Prompts for extraction, gleaning and description summaries.

Conventions every prompt follows (other components and test doubles rely
on them):

* Builders return chat messages, ``[{"role": "system", ...}, {"role": "user", ...}]``.
* Instructions live in the system message and in plain text around the data.
* The data to process (chunk text, description list, context, question)
  always sits in a fenced block directly after a heading line of its own:
  ``---Input Text---``, ``---Descriptions---``, ``---Context---``, or
  ``Question:``. The fence is three backticks, or longer when the data
  itself contains a run of backticks. :func:`fenced_block_after` and
  :func:`find_fenced` read the data back out.
* Examples never use those headings, so a heading names real data only.
* Templates are module constants with ``{name}`` slots filled by
  :func:`fill`, which leaves every other brace alone (JSON needs no escaping).

The query-side prompts (keywords, answers) live in
:mod:`kgrag.retrieval.prompts` and are re-exported here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from kgrag.config.settings import DEFAULT_ENTITY_TYPES
from kgrag.extract.examples import EXAMPLES, Example
from kgrag.extract.fences import (  # noqa: F401  (re-exported)
    CONTEXT_HEADING,
    DESCRIPTIONS_HEADING,
    HISTORY_HEADING,
    INPUT_HEADING,
    QUESTION_HEADING,
    Messages,
    fence,
    fenced_block_after,
    fill,
    find_fenced,
)
from kgrag.extract.formats import COMPLETION_MARKER, TUPLE_DELIMITER, render
from kgrag.extract.templates import (
    DELIMITED_FORMAT,
    EXTRACT_SYSTEM,
    EXTRACT_USER,
    GLEAN_DELIMITED,
    GLEAN_JSON,
    JSON_FORMAT,
    SUMMARY_SYSTEM,
    SUMMARY_USER,
)
from kgrag.llm.base import ChatMessage


def _render_example(number: int, example: Example, fmt: str) -> str:
    output = render(fmt, example.entities, example.relations)
    return (
        f"Example {number}\nEntity types: {', '.join(example.entity_types)}\n"
        f"Example text:\n{fence(example.text)}\nExample output:\n{output}\n"
    )


def extraction_messages(
    text: str,
    *,
    fmt: str = "delimited",
    entity_types: Sequence[str] = DEFAULT_ENTITY_TYPES,
    language: str = "English",
) -> Messages:
    """System + user messages asking for the entities and relations of ``text``."""
    examples = "\n".join(_render_example(i, ex, fmt) for i, ex in enumerate(EXAMPLES, 1))
    format_block = JSON_FORMAT if fmt == "json" else DELIMITED_FORMAT
    values = dict(
        entity_types=", ".join(entity_types),
        language=language,
        d=TUPLE_DELIMITER,
        complete=COMPLETION_MARKER,
    )
    system = fill(
        EXTRACT_SYSTEM, format_rules=fill(format_block, **values), examples=examples, **values
    )
    finish = (
        "Answer with the JSON object only."
        if fmt == "json"
        else f"Finish with {COMPLETION_MARKER}."
    )
    user = fill(
        EXTRACT_USER, heading=INPUT_HEADING, text=fence(text), language=language, finish=finish
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def gleaning_message(*, fmt: str = "delimited") -> ChatMessage:
    """The follow-up user message asking only for what was missed."""
    template = GLEAN_JSON if fmt == "json" else GLEAN_DELIMITED
    return {"role": "user", "content": fill(template, complete=COMPLETION_MARKER)}


def summary_messages(
    name: str | tuple[str, str],
    descriptions: Sequence[str],
    *,
    language: str = "English",
    summary_length: int = 600,
) -> Messages:
    """Messages merging description fragments of one entity or relation.

    ``name`` is an entity name, or a ``(source, target)`` pair for a
    relation. Fragments go one per line as ``{"description": ...}`` JSON.
    """
    if isinstance(name, tuple):
        kind, subject = "relation", f"Kind: relation\nName: {name[0]} -- {name[1]}"
    else:
        kind, subject = "entity", f"Kind: entity\nName: {name}"
    lines = "\n".join(json.dumps({"description": d}, ensure_ascii=False) for d in descriptions)
    system = fill(SUMMARY_SYSTEM, kind=kind, language=language, summary_length=summary_length)
    user = fill(
        SUMMARY_USER,
        subject=subject,
        heading=DESCRIPTIONS_HEADING,
        descriptions=fence(lines),
        kind=kind,
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
