"""Entity and relation extraction with a chat model.

Per chunk: one ``extract`` call, then up to ``max_gleaning`` ``glean``
calls that re-send the whole conversation and ask only for what was
missed. A glean is skipped when the conversation it would send exceeds
``max_extract_input_tokens``. Gleaned records are added; a gleaned entity
whose name was already extracted replaces the earlier rows only when its
description is longer (relations likewise, keyed by their unordered
endpoint pair). Gleaning stops early when a glean finds nothing.

Model failures (:class:`~kgrag.errors.ModelError`) propagate, so the
pipeline fails the chunk's document; odd model *output* never raises.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence

from kgrag.config import DEFAULT_ENTITY_TYPES
from kgrag.errors import ConfigError
from kgrag.extract.formats import FORMATS
from kgrag.extract.parser import parse_extraction
from kgrag.extract.prompts import extraction_messages, gleaning_message
from kgrag.ingest.ids import canonical_pair
from kgrag.llm.base import ChatResult, Role
from kgrag.tokenizer import Tokenizer
from kgrag.types import Chunk, ExtractedEntity, ExtractedRelation, Extraction


class ChatService(Protocol):
    """What the extractor needs of the chat service."""

    async def chat(self, messages: list[dict[str, str]], *, role: Role,
                   json_mode: bool = False) -> ChatResult: ...


def _longest(rows: Sequence[Any]) -> int:
    return len(rows[0].description) if rows else 0


class _Accumulator:
    """Records of one chunk, grouped so gleaned rows can replace earlier ones."""

    def __init__(self) -> None:
        self.entities: dict[str, list[ExtractedEntity]] = {}
        self.relations: dict[tuple[str, str], list[ExtractedRelation]] = {}
        self.warnings: list[str] = []

    def add_first(self, found: Extraction) -> None:
        for e in found.entities:
            self.entities.setdefault(e.name, []).append(e)
        for r in found.relations:
            self.relations.setdefault(canonical_pair(r.source, r.target), []).append(r)

    def add_gleaned(self, found: Extraction) -> None:
        """Add gleaned rows; replace known keys only with longer descriptions."""
        for store, rows, key in (
            (self.entities, found.entities, lambda e: e.name),
            (self.relations, found.relations, lambda r: canonical_pair(r.source, r.target)),
        ):
            grouped: dict[Any, list] = {}
            for row in rows:
                grouped.setdefault(key(row), []).append(row)
            for k, new in grouped.items():
                if k not in store or _longest(new) > _longest(store[k]):
                    store[k] = new

    def result(self) -> Extraction:
        return Extraction(
            entities=[e for rows in self.entities.values() for e in rows],
            relations=[r for rows in self.relations.values() for r in rows],
            warnings=self.warnings,
        )


class LLMExtractor:
    """Extracts entities and relations from chunks with a chat model."""

    def __init__(
        self,
        chat: ChatService,
        tokenizer: Tokenizer,
        *,
        fmt: str = "delimited",
        entity_types: Sequence[str] = DEFAULT_ENTITY_TYPES,
        language: str = "English",
        max_gleaning: int = 1,
        max_extract_input_tokens: int = 20480,
    ):
        if fmt not in FORMATS:
            raise ConfigError(f"unknown extraction format {fmt!r}; known: {', '.join(FORMATS)}")
        if max_gleaning < 0:
            raise ConfigError(f"max_gleaning must be >= 0, got {max_gleaning}")
        self.chat, self.tokenizer = chat, tokenizer
        self.fmt, self.entity_types = fmt, list(entity_types)
        self.language, self.max_gleaning = language, max_gleaning
        self.max_extract_input_tokens = max_extract_input_tokens

    @classmethod
    def from_settings(cls, chat: ChatService, settings: Any, tokenizer: Tokenizer) -> "LLMExtractor":
        """An extractor configured from a :class:`kgrag.config.Settings`."""
        return cls(chat, tokenizer, fmt=settings.extraction_format,
                   entity_types=settings.entity_types, language=settings.language,
                   max_gleaning=settings.max_gleaning,
                   max_extract_input_tokens=settings.max_extract_input_tokens)

    async def _ask(self, messages: list[dict[str, str]], role: Role) -> str:
        result = await self.chat.chat(messages, role=role, json_mode=self.fmt == "json")
        text = getattr(result, "text", "")
        return text if isinstance(text, str) else ""

    def _parse(self, text: str, chunk: Chunk, stage: str) -> Extraction:
        found = parse_extraction(text, self.fmt, chunk.id, chunk.file_path, self.entity_types)
        found.warnings = [f"{stage}: {w}" for w in found.warnings]
        return found

    def _tokens(self, messages: list[dict[str, str]]) -> int:
        return sum(self.tokenizer.count(m["content"]) for m in messages)

    async def extract(self, chunk: Chunk) -> Extraction:
        """All entities and relations of one chunk, tagged with its id and file."""
        if not chunk.content.strip():
            return Extraction()
        messages = extraction_messages(chunk.content, fmt=self.fmt,
                                       entity_types=self.entity_types, language=self.language)
        text = await self._ask(messages, "extract")
        acc = _Accumulator()
        first = self._parse(text, chunk, "extract")
        acc.add_first(first)
        acc.warnings.extend(first.warnings)
        history = [*messages, {"role": "assistant", "content": text}]
        for round_ in range(1, self.max_gleaning + 1):
            request = [*history, gleaning_message(fmt=self.fmt)]
            size = self._tokens(request)
            if size > self.max_extract_input_tokens:
                acc.warnings.append(f"glean {round_}: skipped, conversation of {size} tokens "
                                    f"exceeds {self.max_extract_input_tokens}")
                break
            text = await self._ask(request, "glean")
            gleaned = self._parse(text, chunk, f"glean {round_}")
            acc.add_gleaned(gleaned)
            acc.warnings.extend(gleaned.warnings)
            if not (gleaned.entities or gleaned.relations):
                break
            history = [*request, {"role": "assistant", "content": text}]
        return acc.result()
