"""The one scripted chat model of the tests, for both faces a chat has.

As a *provider* (``chat(request)``, ``stream(request)``: what ``ChatService``
wraps) and as a *service* (``chat(messages, role=..., json_mode=...)``: what
the extractor, the summaries and the keyword step call). Either way each call
is recorded as a :class:`ChatRequest` in ``calls`` and answered from the
script::

    chat = ScriptedChat("first answer", ModelServerError("502"), then=None)

A script entry that is an exception is raised, a ``ChatResult`` is returned as
it is, a string becomes the answer. Once the script is used up, ``then``
answers: a string (default ``"ok"``), a function of the request and the call
number, or ``None``, for which a further call fails the test.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from kgrag.llm.base import ChatMessage, ChatRequest, ChatResult, Messages
from kgrag.llm.retry import RetryPolicy

Then = str | Callable[[ChatRequest, int], str] | None
# as many retries as the default policy, with back-offs of a millisecond or two
QUICK_RETRY = RetryPolicy(max_retries=RetryPolicy().max_retries, base=0.001, cap=0.002)


class ScriptedChat:
    """A chat model answering from a script; ``calls`` records what it was sent.

    Options: ``identity`` (the provider's name), ``delay`` (seconds spent in
    every call and before a stream's first piece), ``finish_reason``,
    ``pieces`` (a stream's piece length; ``None`` streams word by word),
    ``check`` (run on every request: an assertion about what is sent).
    ``active``/``max_active`` count calls in flight, ``closed`` tells
    whether ``aclose`` ran.
    """

    def __init__(
        self,
        *script: str | ChatResult | BaseException,
        then: Then = "ok",
        identity: str = "stub:model@host",
        delay: float = 0.0,
        finish_reason: str = "stop",
        pieces: int | None = None,
        check: Callable[[ChatRequest], None] | None = None,
    ):
        self.script = list(script)
        self.then, self.identity, self.delay = then, identity, delay
        self.finish_reason, self.pieces, self.check = finish_reason, pieces, check
        self.calls: list[ChatRequest] = []
        self.active = self.max_active = 0
        self.closed = False

    @property
    def messages(self) -> list[Messages]:
        """The messages of each call, in order."""
        return [call.messages for call in self.calls]

    def _record(self, request: ChatRequest) -> str | ChatResult:
        if self.check is not None:
            self.check(request)
        self.calls.append(request)
        if self.script:
            item = self.script.pop(0)
        elif self.then is None:
            raise AssertionError(f"unexpected chat call {len(self.calls)}: the script is used up")
        else:
            item = self.then if isinstance(self.then, str) else self.then(request, len(self.calls))
        if isinstance(item, BaseException):
            raise item
        return item

    def _result(self, item: str | ChatResult) -> ChatResult:
        if isinstance(item, ChatResult):
            return item
        return ChatResult(
            text=item,
            prompt_tokens=10,
            completion_tokens=len(item),
            finish_reason=self.finish_reason,
        )

    async def chat(
        self,
        request: ChatRequest | Sequence[ChatMessage],
        *,
        role: Any = "answer",
        json_mode: bool = False,
        accept: object = None,
        tag: object = None,
        use_cache: bool = True,
    ) -> ChatResult:
        if not isinstance(request, ChatRequest):  # called as a chat service
            messages = [ChatMessage(role=m["role"], content=m["content"]) for m in request]
            request = ChatRequest(messages=messages, role=role, json_mode=json_mode)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            await asyncio.sleep(self.delay)
            return self._result(self._record(request))
        finally:
            self.active -= 1

    async def stream(
        self, request: ChatRequest, usage: ChatResult | None = None
    ) -> AsyncIterator[str]:
        if self.delay:
            await asyncio.sleep(self.delay)
        result = self._result(self._record(request))
        text = result.text
        if self.pieces:
            parts = [text[i : i + self.pieces] for i in range(0, len(text), self.pieces)]
        else:
            parts = text.split(" ")
        for part in parts:
            yield part
        if usage is not None:
            usage.text, usage.prompt_tokens, usage.completion_tokens = text, 10, len(text)

    async def aclose(self) -> None:
        self.closed = True


def msgs(text: str) -> Messages:
    """One user message."""
    return [{"role": "user", "content": text}]
