"""Message prefixes that choose how a chat message is answered (LightRAG's, plus kgrag's modes).

``/MODE question`` answers in that mode (``/local``, ``/ppr``, ``/bypass``...);
``/context question`` and ``/MODEcontext question`` return the retrieved
context instead of an answer; ``/MODE[instructions] question`` and
``/[instructions] question`` add instructions for the answer. Text that
starts with no known prefix (``/etc/hosts ...``) is the question itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kgrag.server.compat.chat.names import DEFAULT_MODE, MODES

_PREFIX = re.compile(r"^/([a-z]*)(?:\[([^\]\n]*)\]\s*|\s+|$)")
_CONTEXT = "context"


@dataclass(frozen=True, slots=True)
class Prefixed:
    """A message with its prefix read: the question and what the prefix chose."""

    question: str
    mode: str | None = None  # None: no mode named
    context_only: bool = False
    user_prompt: str | None = None


def _mode_of(word: str) -> tuple[str, bool] | None:
    """``word``'s mode and whether it asks for the context only; None if it is no prefix."""
    if word in MODES:
        return word, False
    if word == _CONTEXT:
        return DEFAULT_MODE, True
    base = word.removesuffix(_CONTEXT)
    if word.endswith(_CONTEXT) and base in MODES and base != "bypass":
        return base, True
    return None


def read_prefix(text: str) -> Prefixed:
    """The question in ``text`` and what its prefix (if any) chose."""
    match = _PREFIX.match(text)
    if match is None:
        return Prefixed(text)
    word, prompt = match.group(1), match.group(2)
    rest = text[match.end() :].strip()
    if not word:
        return Prefixed(rest, user_prompt=prompt) if prompt is not None else Prefixed(text)
    chosen = _mode_of(word)
    if chosen is None:
        return Prefixed(text)
    return Prefixed(rest, chosen[0], chosen[1], prompt)
