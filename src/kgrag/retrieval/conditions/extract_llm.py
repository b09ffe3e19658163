"""Constraints of a question from the chat model (role ``conditions``).

The model is asked for the objects of the question and its qualifiers
as JSON; the reply is parsed leniently (fences, prose around it, broken
JSON) and each value normalised by the same finders the rules use, so a
model's "version 2.0" compares like the rules' "v2". The call goes
through the chat service, which caches it by its messages. A failed
call or a reply that is not such an object returns None: the caller
falls back to the rules.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import json_repair

from kgrag.errors import ModelError
from kgrag.retrieval.conditions.constraint import KINDS, Constraint
from kgrag.retrieval.conditions.extract_rules import from_names, unique
from kgrag.retrieval.conditions.scan import scan
from kgrag.retrieval.conditions.scan_code import product_word

if TYPE_CHECKING:
    from kgrag.llm.base import Messages
    from kgrag.llm.service import ChatService

log = logging.getLogger(__name__)

SYSTEM = """You read one question put to a document collection and state the conditions \
an answer has to respect, without answering it.

Return a JSON object with two keys:
- "objects": the things the question is about (products, systems, people, organisations), \
each written as in the question;
- "qualifiers": a list of {"kind": ..., "value": ...} for every version, model number, date, \
year, protocol, place or quantity with a unit that narrows the question. "kind" is one of \
version, model, date, year, protocol, place, quantity; "value" is copied from the question.

Only list what the question itself says. When it says nothing of a kind, leave it out; \
when it has no qualifiers at all, give an empty list. Output the JSON object only."""


def conditions_messages(question: str) -> Messages:
    """The conditions prompt: the instructions, then the question."""
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Question: {question}"},
    ]


def _qualifier(question: str, kind: str, value: str) -> Constraint | None:
    """The model's qualifier, normalised as the rules would; None when nothing in it parses."""
    at = question.casefold().find(value.casefold())
    span = (at, at + len(value)) if at >= 0 else None
    if kind == "place":
        return Constraint("place", value, value.casefold(), span, "place")
    probe = f"version {value}" if kind == "version" and value[:1].isdigit() else value
    for m in scan(probe):
        if m.kind == kind or {m.kind, kind} <= {"date", "year"}:
            word = product_word(question[: span[0]]) if span else m.label
            return Constraint(m.kind, value, m.norm, span, m.group, word)
    return None


def parse_conditions(question: str, text: str) -> list[Constraint] | None:
    """Constraints from a model reply; None when the reply holds no such object."""
    try:
        data: Any = json_repair.loads(text or "")
    except Exception:  # json_repair raises little, but a reply is untrusted input
        return None
    if isinstance(data, list):
        data = next((d for d in data if isinstance(d, dict)), None)
    if not isinstance(data, dict):
        return None
    objects, qualifiers = data.get("objects"), data.get("qualifiers")
    if not isinstance(objects, list) and not isinstance(qualifiers, list):
        return None
    out = []
    for item in qualifiers if isinstance(qualifiers, list) else []:
        if (
            isinstance(item, dict)
            and item.get("kind") in KINDS
            and isinstance(item.get("value"), str)
        ):
            found = _qualifier(question, str(item["kind"]), item["value"].strip())
            out += [found] if found else []
    names = [o for o in objects if isinstance(o, str)] if isinstance(objects, list) else []
    return unique([*out, *from_names(question, names)])


async def llm_constraints(
    question: str, chat: ChatService
) -> tuple[list[Constraint] | None, str, str | None]:
    """(constraints or None, source ``llm`` / ``cache``, the error when there is none)."""
    try:
        reply = await chat.chat(conditions_messages(question), role="conditions", json_mode=True)
    except ModelError as exc:
        log.warning("conditions call failed, using the rules: %s", exc)
        return None, "llm", f"conditions call failed: {exc}"
    found = parse_conditions(question, reply.text)
    source = "cache" if reply.cached else "llm"
    return found, source, None if found is not None else "conditions reply unusable"
