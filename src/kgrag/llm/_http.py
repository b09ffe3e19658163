"""HTTP plumbing shared by the network providers.

Each provider owns ONE :class:`httpx.AsyncClient` (a keep-alive connection
pool) for its whole lifetime. Everything httpx can raise is translated here
into :mod:`kgrag.errors`, so the retry layer only ever sees kgrag errors:

- 429                      -> ModelRateLimitError (retried)
- 5xx, connection failures -> ModelServerError   (retried)
- timeouts, 408            -> ModelTimeoutError  (retried)
- other 4xx                -> ModelRequestError  (not retried)
- unreadable bodies        -> ModelResponseError (not retried)

Retryable errors carry ``retry_after`` (seconds or None), read from the
``retry-after-ms`` or ``Retry-After`` response headers.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx

from kgrag.errors import (
    ModelError,
    ModelRateLimitError,
    ModelRequestError,
    ModelResponseError,
    ModelServerError,
    ModelTimeoutError,
)


def make_client(
    base_url: str,
    *,
    api_key: str | None = None,
    timeout: float = 240.0,
    max_connections: int = 32,
    headers: dict[str, str] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> httpx.AsyncClient:
    """One pooled client for one provider.

    For a plain-http endpoint no TLS is ever used, so no CA bundle is loaded
    (the SSL context is built once per client anyway, never per call).
    ``transport`` replaces the network (tests use ``httpx.MockTransport``).
    """
    all_headers = {"Accept": "application/json"}
    if api_key:
        all_headers["Authorization"] = f"Bearer {api_key}"
    all_headers.update(headers or {})
    plain_http = urlsplit(base_url).scheme == "http"
    return httpx.AsyncClient(
        base_url=base_url.rstrip("/"),
        headers=all_headers,
        timeout=httpx.Timeout(timeout, connect=min(timeout, 15.0)),
        limits=httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        ),
        verify=not plain_http,
        transport=transport,
    )


def host_of(url: str) -> str:
    """``host[:port]`` of ``url`` (what identities show; never credentials)."""
    parts = urlsplit(url)
    host = parts.hostname or url
    return f"{host}:{parts.port}" if parts.port else host


def retry_after(headers: httpx.Headers) -> float | None:
    """Seconds the server asked us to wait, or None."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_message(resp: httpx.Response) -> str:
    try:
        body = resp.json()
    except ValueError:
        return resp.text[:300]
    err = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(err, dict):
        err = err.get("message", err)
    return str(err)[:300]


def check_status(resp: httpx.Response, what: str) -> None:
    """Raise the kgrag error matching a non-2xx response (its body must be read)."""
    code = resp.status_code
    if code < 400:
        return
    message = f"{what}: HTTP {code}: {_error_message(resp)}"
    exc: ModelError
    if code == 429:
        exc = ModelRateLimitError(message)
    elif code >= 500:
        exc = ModelServerError(message)
    elif code == 408:
        exc = ModelTimeoutError(message)
    else:
        raise ModelRequestError(message)
    exc.retry_after = retry_after(resp.headers)
    raise exc


def transport_error(exc: httpx.HTTPError, what: str) -> ModelError:
    """The kgrag error for an httpx failure without a response."""
    if isinstance(exc, httpx.TimeoutException):
        return ModelTimeoutError(f"{what}: timed out ({type(exc).__name__})")
    if isinstance(exc, httpx.TransportError):
        return ModelServerError(f"{what}: connection failed ({type(exc).__name__}: {exc})")
    return ModelResponseError(f"{what}: {type(exc).__name__}: {exc}")


async def post_json(
    client: httpx.AsyncClient, path: str, payload: dict[str, object], what: str
) -> Any:
    """POST ``payload`` as JSON and return the decoded JSON answer."""
    try:
        resp = await client.post(path, json=payload)
    except httpx.HTTPError as exc:
        raise transport_error(exc, what) from exc
    check_status(resp, what)
    try:
        return resp.json()
    except ValueError as exc:
        raise ModelResponseError(f"{what}: the answer is not JSON: {resp.text[:200]!r}") from exc


@asynccontextmanager
async def stream_lines(
    client: httpx.AsyncClient, path: str, payload: dict[str, object], what: str
) -> AsyncIterator[AsyncIterator[str]]:
    """POST ``payload`` and yield an iterator over the response's text lines."""
    try:
        async with client.stream("POST", path, json=payload) as resp:
            if resp.status_code >= 400:
                await resp.aread()
                check_status(resp, what)
            yield _lines(resp, what)
    except httpx.HTTPError as exc:
        raise transport_error(exc, what) from exc


async def _lines(resp: httpx.Response, what: str) -> AsyncIterator[str]:
    try:
        async for line in resp.aiter_lines():
            yield line
    except httpx.HTTPError as exc:
        raise transport_error(exc, what) from exc


def loads(line: str, what: str) -> Any:
    """Decode one JSON document from a stream line."""
    try:
        return json.loads(line)
    except ValueError as exc:
        raise ModelResponseError(f"{what}: bad stream line {line[:200]!r}") from exc
