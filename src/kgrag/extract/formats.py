"""The two record formats the extraction prompts ask for, and their renderers.

Delimited (default), one record per line, then a completion marker::

    entity<|#|>name<|#|>type<|#|>description
    relation<|#|>source<|#|>target<|#|>keywords<|#|>description
    <|COMPLETE|>

JSON::

    {"entities": [{"name", "type", "description"}],
     "relationships": [{"source", "target", "keywords", "description"}]}

The renderers write prompt examples and let tests round-trip records
through the parser.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Literal

from kgrag.types import ExtractedEntity, ExtractedRelation

Format = Literal["delimited", "json"]
FORMATS: tuple[str, ...] = ("delimited", "json")
TUPLE_DELIMITER = "<|#|>"
COMPLETION_MARKER = "<|COMPLETE|>"
ENTITY_TAG = "entity"
RELATION_TAG = "relation"


def render_delimited(
    entities: Iterable[ExtractedEntity],
    relations: Iterable[ExtractedRelation],
    complete: bool = True,
) -> str:
    """Records in the delimited line format, entities first."""
    d = TUPLE_DELIMITER
    lines = [d.join([ENTITY_TAG, e.name, e.type, e.description]) for e in entities]
    lines += [
        d.join([RELATION_TAG, r.source, r.target, r.keywords, r.description]) for r in relations
    ]
    if complete:
        lines.append(COMPLETION_MARKER)
    return "\n".join(lines)


def render_json(
    entities: Iterable[ExtractedEntity],
    relations: Iterable[ExtractedRelation],
    indent: int | None = None,
) -> str:
    """Records as the JSON object the JSON-mode prompt asks for."""
    data = {
        "entities": [
            {"name": e.name, "type": e.type, "description": e.description} for e in entities
        ],
        "relationships": [
            {
                "source": r.source,
                "target": r.target,
                "keywords": r.keywords,
                "description": r.description,
            }
            for r in relations
        ],
    }
    return json.dumps(data, ensure_ascii=False, indent=indent)


def render(
    fmt: str, entities: Iterable[ExtractedEntity], relations: Iterable[ExtractedRelation]
) -> str:
    """Render in ``fmt`` ("delimited" or "json")."""
    if fmt == "json":
        return render_json(entities, relations, indent=2)
    return render_delimited(entities, relations)
