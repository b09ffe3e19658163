"""Reading the judge's replies: the JSON object in them, robustly, and what it decides.

A reply may wrap its object in a code fence, put prose around it, open
with a ``<think>`` block or spell keys in another case; all of that is
read. What is not there (no object, a criterion left out, a winner that is
neither answer) raises :class:`ValueError` saying so, for the caller to
retry and, failing that, report: an unreadable verdict is never counted.
"""

from __future__ import annotations

import json
import re

from kgrag.evaluation.reports import CRITERIA
from kgrag.llm.reasoning import strip_reasoning

_MAX_STARTS = 50  # "{" positions tried before giving up on a long reply


def json_object(reply: str) -> dict[str, object]:
    """The first JSON object in ``reply``, with its keys lower-cased."""
    text = strip_reasoning(reply)
    decoder = json.JSONDecoder()
    for n, match in enumerate(re.finditer(r"\{", text)):
        if n >= _MAX_STARTS:
            break
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return _lower_keys(value)
    raise ValueError("no JSON object in the reply")


def _lower_keys(value: dict[object, object]) -> dict[str, object]:
    return {str(k).strip().lower(): _lowered(v) for k, v in value.items()}


def _lowered(value: object) -> object:
    return _lower_keys(value) if isinstance(value, dict) else value


def correctness(reply: str) -> tuple[str, str]:
    """("correct" or "incorrect", the reason) from a correctness reply."""
    try:
        found = json_object(reply)
    except ValueError:
        first = re.match(r"\W*(correct|incorrect)\b", reply.strip(), re.I)
        if first is None:
            raise
        return first.group(1).lower(), ""
    verdict = str(found.get("verdict", "")).strip().lower()
    if verdict not in ("correct", "incorrect"):
        raise ValueError(f"verdict {found.get('verdict')!r} is neither correct nor incorrect")
    return verdict, str(found.get("reason", ""))


def _winner(criterion: str, value: object) -> tuple[str, str]:
    reason = ""
    if isinstance(value, dict):
        reason = str(value.get("reason") or value.get("explanation") or "")
        value = value.get("winner")
    word = re.sub(r"[\s\[\]\"'.()]|answer", "", str(value).lower())
    if word in ("1", "2"):
        return word, reason
    if word in ("tie", "equal", "both", "neither"):
        return "tie", reason
    raise ValueError(f"{criterion}: winner {value!r} is neither 1, 2 nor tie")


def pairwise(reply: str) -> dict[str, tuple[str, str]]:
    """Criterion -> (winner "1", "2" or "tie", reason) from a pairwise reply."""
    found = json_object(reply)
    out = {}
    for criterion in CRITERIA:
        if criterion not in found:
            raise ValueError(f"no verdict on {criterion}")
        out[criterion] = _winner(criterion, found[criterion])
    return out
