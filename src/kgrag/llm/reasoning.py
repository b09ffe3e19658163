"""The one filter that takes a model's reasoning out of its replies.

Reasoning models write a ``<think>...</think>`` block (or ``<thinking>``,
in any case, with spaces inside the tag) before, and sometimes inside,
their answer. Every reply is filtered the same way, whoever reads it
(:class:`~kgrag.llm.service.ChatService` filters answers, cached ones,
streams; the extraction parser and the summariser call it too):

- a block ends at the first closing tag (an opening tag inside a block is
  part of it), and is dropped wherever it sits;
- a closing tag with no block open drops everything before it (the model's
  template opened the block in the prompt, so the reply starts inside it);
- a block still open at the end drops the rest (the answer never came);
- whitespace before the answer's first character is dropped when a block
  came before it.

:class:`ReasoningFilter` applies the same rules to a stream, piece by
piece: a tag split across pieces is held back until it is whole, so no
part of a block is ever passed on. What a stream has passed on cannot be
taken back, so there a closing tag with no block open drops what is still
held, and the tag itself, but not the pieces already sent.
:func:`strip_reasoning` is the filter fed the whole reply at once.
"""

from __future__ import annotations

import re

__all__ = ["ReasoningFilter", "strip_reasoning"]

_TAG = re.compile(r"<\s*(/?)\s*think(?:ing)?\s*>", re.IGNORECASE)
# What the end of a piece may hold of a tag that the next piece completes.
_PARTIAL = re.compile(r"<\s*/?\s*(?:t|th|thi|thin|think|thinki|thinkin|thinking)?\s*", re.I)
_MAX_PARTIAL = 64  # longer than any partial tag worth holding back


def _held_from(text: str) -> int:
    """Where a possible partial tag at the end of ``text`` starts (``len(text)``: none)."""
    start = text.rfind("<", max(0, len(text) - _MAX_PARTIAL))
    if start >= 0 and _PARTIAL.fullmatch(text, start):
        return start
    return len(text)


class ReasoningFilter:
    """Reasoning blocks out of a reply that comes in pieces (see the module docstring).

    ``feed`` each piece and send what it returns (possibly ``""``); ``end``
    returns what was still held once the reply is complete.
    """

    def __init__(self) -> None:
        self._held = ""  # text not yet judged: a possible partial tag, or leading space
        self._inside = False  # in a block
        self._seen_tag = False  # a tag came before the answer's first character
        self._started = False  # some non-space text was passed on

    def feed(self, piece: str) -> str:
        """What of ``piece`` (with what was held) may be passed on now."""
        text, pos = self._held + piece, 0
        out: list[str] = []
        for tag in _TAG.finditer(text):
            if not self._inside:
                out = [] if tag.group(1) else [*out, text[pos : tag.start()]]
                self._inside = not tag.group(1)  # a closing tag: all before it was reasoning
            elif tag.group(1):
                self._inside = False
            if not (self._started or any(part.strip() for part in out)):
                self._seen_tag = True
            pos = tag.end()
        rest = text[pos:]
        cut = _held_from(rest)
        self._held = rest[cut:]
        if not self._inside:
            out.append(rest[:cut])
        return self._answer("".join(out))

    def end(self) -> str:
        """What is left once the reply is complete: a partial tag is text, an open block goes."""
        held, self._held = self._held, ""
        if self._inside:
            return ""
        return self._answer(held, final=True)

    def _answer(self, text: str, final: bool = False) -> str:
        """``text`` as passed on: space before the first character waits to be judged."""
        if self._started or not text:
            return text
        if text.strip():
            self._started = True
            return text.lstrip() if self._seen_tag else text
        if final:
            return "" if self._seen_tag else text
        if not self._inside:  # inside a block it is reasoning: a tag came before it anyway
            self._held = text + self._held
        return ""


def strip_reasoning(text: str) -> str:
    """``text`` without reasoning blocks (see the module docstring); never raises."""
    if not isinstance(text, str):
        return ""
    if "<" not in text:
        return text
    reply = ReasoningFilter()
    return reply.feed(text) + reply.end()
