"""The optional LLM judgement on a pair: one chat call with both names and descriptions.

Calls go through the chat service under the ``resolve`` role, so they are
cached (the same pair with the same descriptions costs one call ever) and
counted in the ledger like every other call. Only pairs whose score is
undecided (near the threshold) and that no hard negative keeps apart are
asked; a malformed answer changes nothing.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from kgrag.curation.resolution.score import PairScore
from kgrag.curation.resolution.view import Entity
from kgrag.errors import ModelError

if TYPE_CHECKING:
    from kgrag.llm.base import Messages
    from kgrag.llm.service import ChatService

SYSTEM = (
    "You decide whether two records of a knowledge graph name the same real-world thing "
    "(one person, organisation, place, work...). Aliases, titles and abbreviations can name "
    "one thing; relatives, numbered or qualified variants, and a person and the company "
    'named after them are different things. Answer with JSON only: {"same": true or false, '
    '"reason": "a few words"}.'
)
FOR, AGAINST = 0.3, 0.4
DESCRIPTION_CHARS = 600


def prompt(a: Entity, b: Entity) -> str:
    return (
        f"Entity A: {a.name} ({a.type})\nA: {a.description[:DESCRIPTION_CHARS]}\n"
        f"Entity B: {b.name} ({b.type})\nB: {b.description[:DESCRIPTION_CHARS]}\n"
        "Are A and B the same thing?"
    )


def _verdict(text: str) -> tuple[bool, str] | None:
    start, end = text.find("{"), text.rfind("}")
    try:
        data = json.loads(text[start : end + 1]) if start >= 0 else None
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("same"), bool):
        return None
    return data["same"], str(data.get("reason", ""))[:160]


async def judge(chat: ChatService, a: Entity, b: Entity, scored: PairScore) -> bool:
    """Ask the model about ``scored`` and move its score; returns whether it answered."""
    messages: Messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": prompt(a, b)},
    ]
    try:
        result = await chat.chat(messages, role="resolve", json_mode=True, max_tokens=200)
    except ModelError as exc:
        scored.evidence_against.append(f"LLM judgement failed: {exc}")
        return False
    verdict = _verdict(result.text)
    if verdict is None:
        return False
    same, reason = verdict
    if same:
        scored.score = min(1.0, scored.score + FOR)
        scored.evidence_for.append(f"LLM: same ({reason})")
    else:
        scored.score = max(0.0, scored.score - AGAINST)
        scored.evidence_against.append(f"LLM: different ({reason})")
    return True
