"""The one normalisation applied to every golden output before it is written or compared.

Run-dependent values are replaced by fixed markers; nothing else is touched:

- ISO-8601 timestamps (``2025-01-02T03:04:05.678+00:00``, with ``T`` or a
  space, with or without fraction and zone) -> ``<TIME>``;
- in JSON, the values of keys that hold a time, a duration or a clock
  reading (:data:`TIME_KEYS`, and any key ending in ``_at``, ``_s``,
  ``_ms``, ``_seconds`` or ``_duration``) -> ``"<TIME>"`` (a null stays null);
- a clock reading in brackets (``[16:53:51]``, the pipeline's messages) -> ``[<CLOCK>]``;
- the run's temporary folders (passed as ``roots``) -> ``<TMP>``;
- a loopback address with a port (``127.0.0.1:54321``) -> ``127.0.0.1:<PORT>``;
- server-minted ids that hold a clock reading or a random part
  (``insert_20250102_030405_ab12cd34``, job ids, OpenAI completion ids) -> ``<ID>``.

:func:`compact` (query outputs only, not exports or answers) shortens a
string longer than :data:`LONG` characters to its opening, its length and
a SHA-256 prefix of the whole: still pinned exactly, without repeating every
chunk's text in every mode's file (the export pins the texts themselves).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

TIME = "<TIME>"
LONG = 240
TIME_KEYS = frozenset(
    {
        "created", "updated", "timestamp", "time", "started", "finished", "ended",
        "elapsed", "duration", "job_start", "last_seen", "mtime", "uptime", "seconds",
        "response_time",
    }
)  # fmt: skip
_TIME_SUFFIXES = ("_at", "_s", "_ms", "_seconds", "_duration")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_CLOCK = re.compile(r"\[\d{2}:\d{2}:\d{2}\]")
_PORT = re.compile(r"(127\.0\.0\.1|localhost|testserver):\d+")
_MINTED = re.compile(r"\b(insert|upload|scan|job|track|enqueue)_[0-9]{8}_[0-9]{6}_[0-9a-f]+\b")
_JOB_ID = re.compile(r"\bjob-[0-9a-f]{6,}\b")
_COMPLETION_ID = re.compile(r"\bchatcmpl-[0-9a-f]{8,}\b")


def is_time_key(key: str) -> bool:
    """Whether a JSON key holds a run-dependent time, duration or clock reading."""
    return key in TIME_KEYS or key.endswith(_TIME_SUFFIXES)


def scrub(value: Any) -> Any:
    """``value`` (parsed JSON) with every time-valued key's value replaced by ``<TIME>``."""
    if isinstance(value, dict):
        return {
            k: (TIME if is_time_key(str(k)) and v is not None else scrub(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def compact(value: Any, keep: frozenset[str] = frozenset({"answer"})) -> Any:
    """``value`` with each string over :data:`LONG` characters digested (keys in ``keep`` kept)."""
    if isinstance(value, dict):
        return {k: v if k in keep else compact(v, keep) for k, v in value.items()}
    if isinstance(value, list):
        return [compact(v, keep) for v in value]
    if isinstance(value, str) and len(value) > LONG:
        digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:16]
        return f"{value[:80]}... <{len(value)} chars, sha256 {digest}>"
    return value


def normalise_text(text: str, roots: Iterable[str] = ()) -> str:
    """``text`` with temporary folders, timestamps, ports and minted ids replaced."""
    for root in sorted({str(r) for r in roots if r}, key=len, reverse=True):
        text = text.replace(root, "<TMP>")
    text = _ISO.sub(TIME, text)
    text = _CLOCK.sub("[<CLOCK>]", text)
    text = _PORT.sub(r"\1:<PORT>", text)
    text = _MINTED.sub(lambda m: f"{m.group(1)}_<ID>", text)
    text = _COMPLETION_ID.sub("chatcmpl-<ID>", text)
    return _JOB_ID.sub("job-<ID>", text)


def dump_json(value: Any, roots: Iterable[str] = ()) -> str:
    """Stable JSON text of ``value``: scrubbed, keys sorted, two-space indent, newline-ended."""
    text = json.dumps(scrub(value), ensure_ascii=False, indent=2, sort_keys=True, default=str)
    return normalise_text(text, roots) + "\n"
