"""Collects parsed rows into an :class:`~kgrag.types.Extraction`.

Both parsers hand raw field values to a :class:`RecordCollector`, which
normalises them, drops unusable rows with a warning saying why, and tags
every record with its chunk id and file path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kgrag.extract.normalize import (
    clean_description,
    normalize_keywords,
    normalize_name,
    normalize_type,
    parse_weight,
)
from kgrag.types import ExtractedEntity, ExtractedRelation, Extraction

MAX_WARNINGS = 30


def snippet(value: Any, limit: int = 80) -> str:
    """A short, single-line excerpt of a row for warnings."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class RecordCollector:
    """Builds records from raw fields; never raises on odd values."""

    def __init__(
        self, chunk_id: str = "", file_path: str = "", entity_types: Sequence[str] | None = None
    ):
        self.chunk_id, self.file_path = chunk_id, file_path
        self.entity_types = list(entity_types) if entity_types is not None else None
        self.result = Extraction()
        self._suppressed = 0

    def warn(self, message: str) -> None:
        """Record a warning; past :data:`MAX_WARNINGS` only a count is kept."""
        if len(self.result.warnings) < MAX_WARNINGS:
            self.result.warnings.append(message)
        else:
            self._suppressed += 1

    def add_entity(self, name: Any, type_: Any, description: Any, row: Any = "") -> None:
        clean = normalize_name(name)
        desc = clean_description(description)
        if not clean:
            return self.warn(
                f"dropped entity with an empty or non-name name: {snippet(row or name)}"
            )
        if not desc:
            return self.warn(f"dropped entity {clean!r} with no description")
        self.result.entities.append(
            ExtractedEntity(
                name=clean,
                type=normalize_type(type_, self.entity_types),
                description=desc,
                chunk_id=self.chunk_id,
                file_path=self.file_path,
            )
        )

    def add_relation(
        self,
        source: Any,
        target: Any,
        keywords: Any,
        description: Any,
        weight: Any = None,
        row: Any = "",
    ) -> None:
        src, tgt = normalize_name(source), normalize_name(target)
        desc = clean_description(description)
        if not src or not tgt:
            return self.warn(
                f"dropped relation with an empty or non-name endpoint: "
                f"{snippet(row or (source, target))}"
            )
        if src == tgt:
            return self.warn(f"dropped self-relation of {src!r}")
        if not desc:
            return self.warn(f"dropped relation {src!r} - {tgt!r} with no description")
        self.result.relations.append(
            ExtractedRelation(
                source=src,
                target=tgt,
                keywords=normalize_keywords(keywords),
                description=desc,
                weight=parse_weight(weight),
                chunk_id=self.chunk_id,
                file_path=self.file_path,
            )
        )

    @property
    def count(self) -> int:
        """Records kept so far."""
        return len(self.result.entities) + len(self.result.relations)

    def finish(self) -> Extraction:
        if self._suppressed:
            self.result.warnings.append(f"... and {self._suppressed} more warnings")
            self._suppressed = 0
        return self.result
