"""A failed model call in words a client may see: what went wrong, never where.

A model error names its endpoint (``openai:gpt-4o-mini@10.0.0.5:8080``)
and carries the service's own words: what an operator needs, in the logs
and the CLI. Someone asking a server is told what happened without the
address::

    public_reason(exc, "the chat model")
    # "the chat model refused the connection"

:func:`public_reason` walks the error and its causes: an error that
carries its own ``public`` wording gives it; else the first cause that
says what happened (a refused connection, a timeout, an HTTP status)
names the failure. :func:`scrub_addresses` takes URLs and ``host:port``
out of a text already written (a failed document's stored error).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx

from kgrag.errors import (
    ModelError,
    ModelRateLimitError,
    ModelRequestError,
    ModelResponseError,
    ModelServerError,
    ModelTimeoutError,
)

__all__ = ["public_reason", "scrub_addresses"]

_STATUS = re.compile(r": HTTP (\d{3}):")  # how kgrag.llm._http.check_status words a status
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s'\"<>()]+", re.I)
_AT_HOST = re.compile(r"(?<=\w)@(?:\[[0-9a-f:]+\]|[a-z0-9.-]+)(?::\d+)?", re.I)
_HOST_PORT = re.compile(
    r"(?:\[[0-9a-f:]+\]|\b\d{1,3}(?:\.\d{1,3}){3}|\blocalhost|\b[a-z0-9-]+(?:\.[a-z0-9-]+)+):\d{1,5}\b",
    re.I,
)
HIDDEN = "(address hidden)"


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and its causes (explicit first, else the implicit context), once each."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _status(errors: list[BaseException]) -> str:
    for error in errors:
        if found := _STATUS.search(str(error)):
            return f" (HTTP {found.group(1)})"
    return ""


def _connection(errors: list[BaseException]) -> str | None:
    """What became of the connection, when the chain says."""
    if any(isinstance(e, httpx.ConnectError) for e in errors):
        refused = any(
            isinstance(e, ConnectionRefusedError) or "refused" in str(e).lower() for e in errors
        )
        return "refused the connection" if refused else "could not be reached"
    if any(isinstance(e, httpx.TimeoutException) for e in errors):
        return "did not answer in time"
    if any(isinstance(e, httpx.TransportError) for e in errors):
        return "dropped the connection"
    return None


_KINDS: tuple[tuple[type[ModelError], str], ...] = (
    (ModelRateLimitError, "kept refusing requests as too many"),
    (ModelServerError, "kept failing"),
    (ModelRequestError, "refused the request"),
    (ModelResponseError, "gave an answer that could not be used"),
    (ModelTimeoutError, "did not answer in time"),
)


def _what(errors: list[BaseException], bound: float | None) -> str:
    """What happened, from the most telling errors of the chain."""
    connection = _connection(errors)
    if bound is not None and any(type(e) is TimeoutError for e in errors):
        waited = f"did not answer within {bound:g} s"
        return f"{waited} ({connection})" if connection and "in time" not in connection else waited
    if connection:
        return connection
    for kind, words in _KINDS:
        if any(isinstance(e, kind) for e in errors):
            return words + _status(errors)
    return "failed"


def public_reason(
    exc: BaseException, service: str = "the model service", bound: float | None = None
) -> str:
    """Why ``service`` failed, with no address, URL or service text in it.

    ``bound``: the seconds the caller waited, said when the wait ran out.
    """
    errors = list(_chain(exc))
    for error in errors:
        own = getattr(error, "public", None)
        if isinstance(own, str) and own:
            return own
    return f"{service} {_what(errors, bound)}"


def scrub_addresses(text: str) -> str:
    """``text`` with URLs and ``host:port`` addresses hidden (an identity keeps its model name)."""
    text = _URL.sub(HIDDEN, text)
    text = _AT_HOST.sub("", text)
    return _HOST_PORT.sub(HIDDEN, text)
