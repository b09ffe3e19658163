"""Collects parsed rows into an :class:`~kgrag.types.Extraction`.

Both parsers hand raw field values to a :class:`RecordCollector`, which
normalises them, drops unusable rows with a warning saying why, and tags
every record with its chunk id and file path.

A record is accepted only when it is well-formed. These fields are
required, and a record with one of them missing or empty (nothing left
once control characters and spaces go) is *rejected*: counted in
``Extraction.rejected`` as well as warned about, so that the reply it came
from is judged malformed (:func:`kgrag.extract.llm_extractor.reply_problem`):

- an entity: its name, its type and its description;
- a relation: its source, its target, its keywords and its description.

So a row cut short (a field missing) is never completed with a default:
no ``UNKNOWN`` or ``Other`` type, no empty keywords. The parsers reject
too what they cannot read as a record (a row with the wrong number of
fields, of an unknown kind, an item that is no object) and a record the
model may not have finished (the last row of a reply that stops without
its completion marker). Genuine repairs of a well-formed record stay
repairs: a type that was not offered becomes ``Other``, odd quoting and
spacing are cleaned. A record that is well-formed but useless is dropped
without counting as malformed: a name with no letter (``2024``) and a
relation of an entity to itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from kgrag.extract.normalize import (
    clean_description,
    clean_field,
    normalize_keywords,
    normalize_name,
    normalize_type,
    parse_weight,
)
from kgrag.types import ExtractedEntity, ExtractedRelation, Extraction

MAX_WARNINGS = 30


def snippet(value: object, limit: int = 80) -> str:
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

    def reject(self, message: str) -> None:
        """Count a malformed record and say why it was rejected."""
        self.result.rejected += 1
        self.warn(message)

    def warn(self, message: str) -> None:
        """Record a warning; past :data:`MAX_WARNINGS` only a count is kept."""
        if len(self.result.warnings) < MAX_WARNINGS:
            self.result.warnings.append(message)
        else:
            self._suppressed += 1

    def add_entity(
        self, name: object, type_: object, description: object, row: object = ""
    ) -> None:
        clean = normalize_name(name)
        desc = clean_description(description)
        if not clean_field(name):
            return self.reject(f"rejected entity with no name: {snippet(row or name)}")
        if not clean:
            return self.warn(f"dropped entity with a non-name name: {snippet(row or name)}")
        if not clean_field(type_):
            return self.reject(f"rejected entity {clean!r} with no type")
        if not desc:
            return self.reject(f"rejected entity {clean!r} with no description")
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
        source: object,
        target: object,
        keywords: object,
        description: object,
        weight: object = None,
        row: object = "",
    ) -> None:
        src, tgt = normalize_name(source), normalize_name(target)
        desc, words = clean_description(description), normalize_keywords(keywords)
        if not clean_field(source) or not clean_field(target):
            return self.reject(
                f"rejected relation with no source or target: {snippet(row or (source, target))}"
            )
        if not src or not tgt:
            return self.warn(
                f"dropped relation with a non-name endpoint: {snippet(row or (source, target))}"
            )
        if src == tgt:
            return self.warn(f"dropped self-relation of {src!r}")
        if not words:
            return self.reject(f"rejected relation {src!r} - {tgt!r} with no keywords")
        if not desc:
            return self.reject(f"rejected relation {src!r} - {tgt!r} with no description")
        self.result.relations.append(
            ExtractedRelation(
                source=src,
                target=tgt,
                keywords=words,
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

    def mark(self) -> tuple[int, int]:
        """Where the records are now, for :meth:`take_back`."""
        return len(self.result.entities), len(self.result.relations)

    def take_back(self, mark: tuple[int, int], why: str) -> None:
        """Reject the records added since ``mark``, saying ``why``."""
        entities, relations = mark
        taken: list[ExtractedEntity | ExtractedRelation] = [
            *self.result.entities[entities:],
            *self.result.relations[relations:],
        ]
        for record in taken:
            self.reject(f"rejected {snippet(_label(record), 60)!r}: {why}")
        del self.result.entities[entities:], self.result.relations[relations:]

    def finish(self) -> Extraction:
        if self._suppressed:
            self.result.warnings.append(f"... and {self._suppressed} more warnings")
            self._suppressed = 0
        return self.result


def _label(record: ExtractedEntity | ExtractedRelation) -> str:
    if isinstance(record, ExtractedEntity):
        return f"entity {record.name}"
    return f"relation {record.source} - {record.target}"
