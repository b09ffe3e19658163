"""Entity and relation extraction with a chat model.

Per chunk: one ``extract`` call, then up to ``max_gleaning`` ``glean``
calls that re-send the whole conversation and ask only for what was
missed. A glean is skipped when the conversation it would send exceeds
``max_extract_input_tokens``. Gleaned records are added; a gleaned entity
whose name was already extracted replaces the earlier rows only when its
description is longer (relations likewise, keyed by their unordered
endpoint pair). Gleaning stops early when a glean finds nothing.

Every extract and glean reply is judged (:func:`reply_problem`). A reply
is *unhealthy*, checked in this order, when:

1. the provider cut it at the token limit (``finish_reason == "length"``);
2. it is empty or only whitespace;
3. it looks cut off: no completion marker (``<|COMPLETE|>`` in any case or
   bracket style, as the parser reads it) and no JSON value that closes.
   In JSON mode a reply must hold a JSON value whose brackets close (a
   delimited reply with its completion marker also passes: the parser
   falls back to that format);
4. it yields no entity and no relation while the parser warned (rows
   were dropped, or nothing could be read);
5. the parser's warnings outnumber the records it kept (most rows dropped);
6. the parser rejected a malformed record (a required field missing or
   empty, a row of an unknown kind, a last row that may be cut off; see
   :mod:`kgrag.extract.collect`), however many others were well-formed.

A reply with its completion marker (or closing JSON) and no records or
warnings is healthy: the chunk has nothing to extract, and that costs one
call. A reply is healthy only when every record in it is well-formed:
one rejected record makes the whole reply malformed, since the model that
wrote it may have cut or shifted the records around it too. Unhealthy
replies are never cached (the ``accept`` judge of
:meth:`kgrag.llm.service.ChatService.chat`; an old cached one is dropped
and asked again). The extractor then re-asks up to ``max_reasks`` times,
with the same role: the conversation it sent plus one user turn saying
which attempt failed and why (quoting up to three parser warnings) and
restating the format. The bad reply itself is not replayed as an
assistant turn, which would read as a finished answer to continue (a
glean) rather than one to redo. Sending changed messages matters: a
deterministic model answers identical messages identically.

The first healthy attempt is used, and the chunk gets the warning
``"extract: reply malformed (why), recovered on re-ask N"``. When every
attempt is unhealthy, the attempt with the most records is kept (the
earliest on a tie) and a warning names the attempts and reasons. A
failed extract with no records skips gleaning; one with records is gleaned
as usual (gleaning may recover what a cut-off reply lost); a failed glean
ends gleaning. The kept records are the well-formed ones: a rejected
record never reaches the graph, whichever reply it came in.
``Extraction.rejected`` counts the records rejected in all the replies of
the chunk, and the two warnings above reach the document (``kgrag docs``,
``kgrag status``). If the chunk ends with no records at all and a stage
failed, ``Extraction.error`` says why. Everything is a deterministic
function of the chunk text and the model's answers: no randomness, no
timing.

Model failures (:class:`~kgrag.errors.ModelError`) propagate, so the
pipeline fails the chunk's document; odd model *output* never raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from kgrag.config.settings import DEFAULT_ENTITY_TYPES, Settings
from kgrag.errors import ConfigError
from kgrag.extract.fences import fence
from kgrag.extract.formats import COMPLETION_MARKER, FORMATS, TUPLE_DELIMITER
from kgrag.extract.parser import json_closes, parse_extraction
from kgrag.extract.prompts import extraction_messages, gleaning_message
from kgrag.ingest.ids import canonical_pair
from kgrag.llm.base import ChatMessage, ChatResult, Messages, Role
from kgrag.llm.tokenizer import Tokenizer
from kgrag.types import Chunk, ExtractedEntity, ExtractedRelation, Extraction

_Key = TypeVar("_Key")
_Row = TypeVar("_Row", ExtractedEntity, ExtractedRelation)
# A completion marker in any case or bracket style (what the parser accepts).
_L, _P, _R = "[<\uff1c]", "[|\uff5c]", "[>\uff1e]"
_MARKER = re.compile(
    f"(?:{_L}[ \\t]*)?{_P}[ \\t]*complete[ \\t]*{_P}[ \\t]*{_R}?"
    f"|{_L}[ \\t]*{_P}?[ \\t]*complete[ \\t]*{_P}?[ \\t]*{_R}",
    re.IGNORECASE,
)
_REPAIR_FORMAT = {
    "delimited": (
        f"Write every record on its own line with its fields separated by "
        f"{TUPLE_DELIMITER}, exactly as described, and end with "
        f"{COMPLETION_MARKER} on its own line."
    ),
    "json": (
        'Answer with one complete JSON object, {"entities": [...], '
        '"relationships": [...]}, with every field of every item, and nothing else.'
    ),
}


class ExtractorChat(Protocol):
    """What the extractor needs of the chat service (:class:`kgrag.llm.service.ChatService`)."""

    async def chat(
        self,
        messages: Messages,
        *,
        role: Role,
        json_mode: bool = False,
        accept: Callable[[ChatResult], bool] | None = None,
        tag: str | None = None,
    ) -> ChatResult: ...


def _cut_off(text: str, fmt: str) -> str | None:
    """Why ``text`` looks cut off (rule 3 of the module docstring), or None."""
    if _MARKER.search(text):
        return None
    closes = json_closes(text)
    if closes:
        return None
    if fmt == "json":
        return "no JSON object" if closes is None else "JSON does not close"
    return "no completion marker"


def reply_problem(
    text: str,
    fmt: str = "delimited",
    found: Extraction | None = None,
    finish_reason: str | None = None,
) -> str | None:
    """Why an extract or glean reply is unhealthy (see the module docstring); None if healthy.

    ``found`` is the reply parsed with :func:`parse_extraction` (parsed
    here when not given).
    """
    if finish_reason == "length":
        return "cut at the token limit"
    if not isinstance(text, str) or not text.strip():
        return "empty reply"
    cut = _cut_off(text, fmt)
    if cut:
        return cut
    if found is None:
        found = parse_extraction(text, fmt)
    records, dropped = len(found.entities) + len(found.relations), len(found.warnings)
    if not records and dropped:
        return "no usable records"
    if dropped > records:
        return f"most rows dropped ({dropped} warnings, {records} records)"
    if found.rejected:
        return f"{_plural(found.rejected, 'malformed record')} rejected"
    return None


@dataclass(slots=True)
class _Attempt:
    """One judged reply."""

    text: str
    found: Extraction
    problem: str | None

    @property
    def records(self) -> int:
        return len(self.found.entities) + len(self.found.relations)


class _Stage:
    """The judged replies of one extract or glean call and its re-asks, in order."""

    def __init__(self, attempts: list[_Attempt]):
        self.attempts = attempts

    @property
    def failed(self) -> bool:
        return self.attempts[-1].problem is not None

    @property
    def used(self) -> _Attempt:
        """The healthy last reply, else the one with the most records (earliest on a tie)."""
        if not self.failed:
            return self.attempts[-1]
        return max(self.attempts, key=lambda a: a.records)

    @property
    def problems(self) -> list[str]:
        return [a.problem for a in self.attempts if a.problem is not None]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def repair_message(fmt: str, attempt: int, problem: str, warnings: Sequence[str]) -> ChatMessage:
    """The user turn that re-asks after unhealthy attempt number ``attempt``."""
    lines = [f"Your answer to this request (attempt {attempt}) could not be used: {problem}."]
    if warnings:
        lines.append("What went wrong:\n" + fence("\n".join(warnings[:3])))
    lines.append(
        "Answer again from the start with the full output for the same input text. "
        + _REPAIR_FORMAT.get(fmt, _REPAIR_FORMAT["delimited"])
    )
    return {"role": "user", "content": "\n".join(lines)}


def _longest(rows: Sequence[ExtractedEntity | ExtractedRelation]) -> int:
    return len(rows[0].description) if rows else 0


def _replace_longer(
    store: dict[_Key, list[_Row]], rows: Iterable[_Row], key: Callable[[_Row], _Key]
) -> None:
    """Group ``rows`` by ``key``; a group replaces a known key only with longer descriptions."""
    grouped: dict[_Key, list[_Row]] = {}
    for row in rows:
        grouped.setdefault(key(row), []).append(row)
    for k, new in grouped.items():
        if k not in store or _longest(new) > _longest(store[k]):
            store[k] = new


class _Accumulator:
    """Records of one chunk, grouped so gleaned rows can replace earlier ones."""

    def __init__(self) -> None:
        self.entities: dict[str, list[ExtractedEntity]] = {}
        self.relations: dict[tuple[str, str], list[ExtractedRelation]] = {}
        self.warnings: list[str] = []
        self.error: str | None = None
        self.rejected = 0

    def add_first(self, found: Extraction) -> None:
        for e in found.entities:
            self.entities.setdefault(e.name, []).append(e)
        for r in found.relations:
            self.relations.setdefault(canonical_pair(r.source, r.target), []).append(r)

    def add_gleaned(self, found: Extraction) -> None:
        """Add gleaned rows; replace known keys only with longer descriptions."""
        _replace_longer(self.entities, found.entities, lambda e: e.name)
        _replace_longer(
            self.relations, found.relations, lambda r: canonical_pair(r.source, r.target)
        )

    def note(self, stage: str, outcome: _Stage) -> None:
        """Warnings of a stage's used reply, plus what its re-asks did."""
        self.warnings.extend(outcome.used.found.warnings)
        self.rejected += sum(a.found.rejected for a in outcome.attempts)
        problems, tries = outcome.problems, len(outcome.attempts)
        if not problems:
            return
        reasons = "; ".join(dict.fromkeys(problems))
        if not outcome.failed:
            self.warnings.append(
                f"{stage}: reply malformed ({reasons}), recovered on re-ask {tries - 1}"
            )
            return
        self.warnings.append(
            f"{stage}: reply malformed in {_plural(tries, 'attempt')} "
            f"({reasons}); kept the {_plural(outcome.used.records, 'record')} "
            f"of the best"
        )
        if self.error is None:
            self.error = (
                f"{stage}: reply unparseable after {_plural(tries, 'attempt')} ({problems[-1]})"
            )

    def result(self) -> Extraction:
        entities = [e for rows in self.entities.values() for e in rows]
        relations = [r for rows in self.relations.values() for r in rows]
        error = None if entities or relations else self.error
        return Extraction(
            entities=entities,
            relations=relations,
            warnings=self.warnings,
            rejected=self.rejected,
            error=error,
        )


class LLMExtractor:
    """Extracts entities and relations from chunks with a chat model."""

    def __init__(
        self,
        chat: ExtractorChat,
        tokenizer: Tokenizer,
        *,
        fmt: str = "delimited",
        entity_types: Sequence[str] = DEFAULT_ENTITY_TYPES,
        language: str = "English",
        max_gleaning: int = 1,
        max_extract_input_tokens: int = 20480,
        max_reasks: int = 3,
    ):
        if fmt not in FORMATS:
            raise ConfigError(f"unknown extraction format {fmt!r}; known: {', '.join(FORMATS)}")
        if max_gleaning < 0:
            raise ConfigError(f"max_gleaning must be >= 0, got {max_gleaning}")
        if max_reasks < 0:
            raise ConfigError(f"max_reasks must be >= 0, got {max_reasks}")
        self.chat, self.tokenizer = chat, tokenizer
        self.fmt, self.entity_types = fmt, list(entity_types)
        self.language, self.max_gleaning = language, max_gleaning
        self.max_extract_input_tokens, self.max_reasks = max_extract_input_tokens, max_reasks

    @classmethod
    def from_settings(
        cls, chat: ExtractorChat, settings: Settings, tokenizer: Tokenizer
    ) -> LLMExtractor:
        """An extractor configured from a :class:`kgrag.config.settings.Settings`."""
        return cls(
            chat,
            tokenizer,
            fmt=settings.extraction.format,
            entity_types=settings.extraction.entity_types,
            language=settings.extraction.language,
            max_gleaning=settings.extraction.max_gleaning,
            max_extract_input_tokens=settings.extraction.max_input_tokens,
            max_reasks=settings.extraction.max_reasks,
        )

    def _judge(self, text: str, finish_reason: str | None, chunk: Chunk) -> _Attempt:
        found = parse_extraction(text, self.fmt, chunk.id, chunk.file_path, self.entity_types)
        return _Attempt(text, found, reply_problem(text, self.fmt, found, finish_reason))

    async def _ask(self, messages: Messages, role: Role, chunk: Chunk) -> _Attempt:
        """One call, judged; the service caches the reply only when it is healthy."""
        judged: dict[str, _Attempt] = {}

        def accept(result: ChatResult) -> bool:
            text = result.text if isinstance(result.text, str) else ""
            attempt = judged[text] = self._judge(text, result.finish_reason, chunk)
            return attempt.problem is None

        result = await self.chat.chat(
            messages, role=role, json_mode=self.fmt == "json", accept=accept, tag=chunk.id
        )
        text = getattr(result, "text", "")
        text = text if isinstance(text, str) else ""
        if text in judged:
            return judged[text]
        return self._judge(text, getattr(result, "finish_reason", None), chunk)

    async def _ask_healthy(self, request: Messages, role: Role, chunk: Chunk) -> _Stage:
        """Ask, then re-ask with a repair turn while the reply is unhealthy."""
        attempts = [await self._ask(request, role, chunk)]
        while (problem := attempts[-1].problem) is not None and len(attempts) <= self.max_reasks:
            warnings = attempts[-1].found.warnings
            repair = repair_message(self.fmt, len(attempts), problem, warnings)
            attempts.append(await self._ask([*request, repair], role, chunk))
        return _Stage(attempts)

    def _tag(self, outcome: _Stage, stage: str) -> _Stage:
        outcome.used.found.warnings = [f"{stage}: {w}" for w in outcome.used.found.warnings]
        return outcome

    def _tokens(self, messages: Messages) -> int:
        return sum(self.tokenizer.count(m["content"]) for m in messages)

    async def extract(self, chunk: Chunk) -> Extraction:
        """All entities and relations of one chunk, tagged with its id and file."""
        if not chunk.content.strip():
            return Extraction()
        messages = extraction_messages(
            chunk.content, fmt=self.fmt, entity_types=self.entity_types, language=self.language
        )
        acc = _Accumulator()
        first = self._tag(await self._ask_healthy(messages, "extract", chunk), "extract")
        acc.add_first(first.used.found)
        acc.note("extract", first)
        if first.failed and not first.used.records:
            return acc.result()
        answered: Messages = [*messages, {"role": "assistant", "content": first.used.text}]
        await self._glean(chunk, answered, acc)
        return acc.result()

    async def _glean(self, chunk: Chunk, history: Messages, acc: _Accumulator) -> None:
        """Gleaning rounds on top of the conversation so far."""
        for round_ in range(1, self.max_gleaning + 1):
            request: Messages = [*history, gleaning_message(fmt=self.fmt)]
            size = self._tokens(request)
            if size > self.max_extract_input_tokens:
                acc.warnings.append(
                    f"glean {round_}: skipped, conversation of {size} tokens "
                    f"exceeds {self.max_extract_input_tokens}"
                )
                return
            stage = f"glean {round_}"
            outcome = self._tag(await self._ask_healthy(request, "glean", chunk), stage)
            acc.add_gleaned(outcome.used.found)
            acc.note(stage, outcome)
            if outcome.failed or not outcome.used.records:
                return
            history = [*request, ChatMessage(role="assistant", content=outcome.used.text)]
