"""Fenced data blocks and template filling, shared by every prompt.

The data a prompt carries (chunk text, description list, context,
question) sits in a fenced block directly after a heading line of its
own; these helpers write such blocks and read them back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kgrag.llm.base import ChatMessage, Messages

INPUT_HEADING = "---Input Text---"
DESCRIPTIONS_HEADING = "---Descriptions---"
CONTEXT_HEADING = "---Context---"
HISTORY_HEADING = "---Conversation History---"
QUESTION_HEADING = "Question:"
_FENCE = re.compile(r"^(`{3,})[\w-]*\s*$")
_SLOT = re.compile(r"\{(\w+)\}")

__all__ = ["Messages"]  # prompt builders here and in retrieval import it with the helpers


def fill(template: str, **values: object) -> str:
    """Replace ``{name}`` slots that have a value; leave other braces as they are."""
    return _SLOT.sub(
        lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template
    )


def fence(text: str) -> str:
    """``text`` in a fenced block longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}\n{text}\n{ticks}"


def fenced_block_after(text: str, heading: str) -> str | None:
    """The data in the fenced block after the last line equal to ``heading``."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.strip() == heading]
    for start in reversed(starts):
        i = start + 1
        while i < len(lines) and not lines[i].strip():
            i += 1
        opener = _FENCE.match(lines[i]) if i < len(lines) else None
        if not opener:
            continue
        ticks = opener.group(1)
        for j in range(i + 1, len(lines)):
            if lines[j].strip() == ticks:
                return "\n".join(lines[i + 1 : j])
    return None


def find_fenced(messages: Sequence[ChatMessage], heading: str) -> str | None:
    """:func:`fenced_block_after` over chat messages, the newest first."""
    for message in reversed(messages):
        found = fenced_block_after(message.get("content", ""), heading)
        if found is not None:
            return found
    return None
