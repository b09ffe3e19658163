"""Faults the fake OpenAI-compatible server injects, and the counters it keeps.

Faults are set by command-line flag or at run time (``POST /control``):

* ``latency`` / ``per_token`` / ``embed_latency``: seconds added to a call;
* ``max_concurrency``: calls in flight (per endpoint) beyond which a call
  is answered 429;
* ``rate_limit_rate`` / ``rate_limit_count``: a fraction of the calls, or
  the next N calls, answered 429 with ``Retry-After`` (``retry_after``
  seconds; also as ``retry-after-ms``);
* ``error_rate`` / ``error_count``: the same for 500s;
* ``garbage_rate``: a fraction of extraction and gleaning replies malformed;
* ``truncate_rate``: a fraction of chat replies cut in half with
  ``finish_reason: "length"``;
* ``hang_rate`` / ``hang_count``: calls held ``hang_s`` seconds (or until
  the server stops) and then dropped without an answer.

Rates are decided by a hash of the seed, the request and how many times
that same request was seen, so a retried request may pass and the pattern
does not depend on arrival order. Counts apply to the next calls in
arrival order. Everything is thread-safe: the HTTP server runs one thread
per connection.
"""

from __future__ import annotations

import dataclasses
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

KINDS = ("extraction", "gleaning", "summary", "keywords", "answer")


@dataclass
class Faults:
    """What the server does besides answering (module docstring)."""

    latency: float = 0.0
    per_token: float = 0.0
    embed_latency: float = 0.0
    max_concurrency: int = 0
    rate_limit_rate: float = 0.0
    rate_limit_count: int = 0
    retry_after: float = 0.25
    error_rate: float = 0.0
    error_count: int = 0
    garbage_rate: float = 0.0
    truncate_rate: float = 0.0
    hang_rate: float = 0.0
    hang_count: int = 0
    hang_s: float = 3600.0
    dim: int = 384
    seed: int = 0

    def update(self, changes: dict[str, Any]) -> None:
        """Set the named faults; an unknown name or a wrong type raises ValueError."""
        fields = {f.name: f for f in dataclasses.fields(self)}
        for name, value in changes.items():
            if name not in fields:
                raise ValueError(f"unknown fault {name!r}; known: {', '.join(sorted(fields))}")
            kind = type(getattr(self, name))
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"fault {name!r} takes a number, got {value!r}")
            setattr(self, name, kind(value))


class Refusal(Exception):
    """A call answered with an HTTP error instead of a reply."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.headers = status, headers or {}


class Hang(Exception):
    """A call held without an answer."""


@dataclass
class Stats:
    """Counters of one server since its start or last reset (``GET /stats``)."""

    requests: dict[str, int] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    prompt_tokens: int = 0
    completion_tokens: int = 0
    json_mode_calls: int = 0
    stream_calls: int = 0
    garbage: int = 0
    truncated: int = 0
    errors_500: int = 0
    rejected_429: int = 0
    hangs: int = 0
    bad_requests: int = 0
    embedding_requests: int = 0
    embedding_inputs: int = 0
    embedding_tokens: int = 0
    in_flight: dict[str, int] = field(default_factory=dict)
    max_in_flight: dict[str, int] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    def snapshot(self) -> dict[str, Any]:
        """The counters as JSON, with totals."""
        out = {k: v for k, v in dataclasses.asdict(self).items() if k != "started"}
        out["chat_calls"] = sum(self.calls.values())
        out["errors_injected"] = (
            self.errors_500 + self.rejected_429 + self.hangs + self.garbage + self.truncated
        )
        out["max_in_flight_chat"] = self.max_in_flight.get("chat", 0)
        out["since_reset_s"] = round(time.monotonic() - self.started, 3)
        return out


class FaultState:
    """The faults, the counters and the per-request attempt memory, behind one lock."""

    def __init__(self, faults: Faults):
        self.faults = faults
        self.stats = Stats()
        self.lock = threading.Lock()
        self._seen: dict[int, int] = {}

    def reset(self) -> None:
        """Zero the counters and forget how often each request was seen."""
        with self.lock:
            self.stats, self._seen = Stats(), {}

    def count(self, name: str, by: int = 1) -> None:
        """Add ``by`` to the integer counter ``name``."""
        with self.lock:
            setattr(self.stats, name, getattr(self.stats, name) + by)

    def admit(self, endpoint: str, digest: int) -> None:
        """Enter a call, or raise Refusal / Hang; the caller must :meth:`leave` after entering."""
        with self.lock:
            stats = self.stats
            stats.requests[endpoint] = stats.requests.get(endpoint, 0) + 1
            attempt = self._seen.get(digest, 0)
            self._seen[digest] = attempt + 1
            self._refuse(endpoint, digest, attempt)
            busy = stats.in_flight.get(endpoint, 0) + 1
            stats.in_flight[endpoint] = busy
            stats.max_in_flight[endpoint] = max(stats.max_in_flight.get(endpoint, 0), busy)

    def leave(self, endpoint: str) -> None:
        """A call admitted by :meth:`admit` has ended."""
        with self.lock:
            self.stats.in_flight[endpoint] -= 1

    def _refuse(self, endpoint: str, digest: int, attempt: int) -> None:
        f, stats = self.faults, self.stats
        if self._take("hang_count") or self._draw("hang", f.hang_rate, digest, attempt):
            stats.hangs += 1
            raise Hang()
        full = f.max_concurrency and stats.in_flight.get(endpoint, 0) >= f.max_concurrency
        if (
            full
            or self._take("rate_limit_count")
            or self._draw("429", f.rate_limit_rate, digest, attempt)
        ):
            stats.rejected_429 += 1
            raise Refusal(429, "fake rate limit", self.retry_headers())
        if self._take("error_count") or self._draw("500", f.error_rate, digest, attempt):
            stats.errors_500 += 1
            raise Refusal(500, "fake internal server error")

    def _take(self, name: str) -> bool:
        """Use up one of the counted faults ``name``, if any is left."""
        left = getattr(self.faults, name)
        if left > 0:
            setattr(self.faults, name, left - 1)
        return left > 0

    def _draw(self, what: str, rate: float, digest: int, attempt: int) -> bool:
        return rate > 0 and chance(self.faults.seed, what, digest, attempt) < rate

    def retry_headers(self) -> dict[str, str]:
        """``Retry-After`` (whole seconds, at least 1) and ``retry-after-ms``."""
        wait = max(0.0, self.faults.retry_after)
        return {"Retry-After": str(max(1, round(wait))), "retry-after-ms": str(int(wait * 1000))}

    def draw(self, what: str, rate: float, digest: int) -> bool:
        """A seeded yes with probability ``rate`` for this request (garbage, truncation)."""
        return rate > 0 and chance(self.faults.seed, what, digest) < rate


def chance(*parts: object) -> float:
    """A number in [0, 1) that is a stable function of ``parts``."""
    return random.Random("\x1f".join(map(str, parts))).random()
