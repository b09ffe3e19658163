"""The judge: a chat model asked for a verdict, its reply read, retried when unreadable.

Each request goes through the chat service like any other call (cache,
retries on failures, concurrency limit, ledger). A reply that cannot be
read is never cached; the judge is asked again, once per extra attempt,
with its own reply and what was wrong with it; when no attempt gives a
readable reply, the verdict is an error the report shows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from kgrag.evaluation.prompts import RETRY

if TYPE_CHECKING:
    from kgrag.llm.base import ChatResult, Messages
    from kgrag.llm.ledger import Ledger
    from kgrag.llm.service import ChatService

T = TypeVar("T")
ATTEMPTS = 2  # the first request and one asking again
_SHOWN = 160  # characters of an unreadable reply kept in the error


@dataclass(slots=True)
class Verdict(Generic[T]):
    """What a judge request gave: the parsed reply, or why none could be read."""

    value: T | None
    error: str | None
    attempts: int


def _readable(parse: Callable[[str], object], result: ChatResult) -> bool:
    try:
        parse(result.text)
    except ValueError:
        return False
    return True


class Judge:
    """Verdicts from ``chat``; ``attempts``: how often to ask before reporting a failure."""

    def __init__(self, chat: ChatService, attempts: int = ATTEMPTS):
        self.chat, self.attempts = chat, max(1, attempts)

    @property
    def identity(self) -> str:
        return self.chat.identity

    @property
    def ledger(self) -> Ledger:
        return self.chat.ledger

    async def ask(self, messages: Messages, parse: Callable[[str], T]) -> Verdict[T]:
        """The reply to ``messages`` read by ``parse`` (which raises ValueError when it cannot)."""
        conversation, problem, reply = list(messages), "", ""
        for attempt in range(1, self.attempts + 1):
            result = await self.chat.chat(
                conversation,
                role="judge",
                json_mode=True,
                accept=lambda r: _readable(parse, r),
            )
            reply = result.text
            try:
                return Verdict(parse(reply), None, attempt)
            except ValueError as exc:
                problem = str(exc)
            conversation = [
                *messages,
                {"role": "assistant", "content": reply},
                {"role": "user", "content": RETRY.format(problem=problem)},
            ]
        shown = " ".join(reply.split())[:_SHOWN]
        error = f"{problem} (asked {self.attempts} times; last reply: {shown!r})"
        return Verdict(None, error, self.attempts)
