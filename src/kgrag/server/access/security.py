"""What every response carries and what every request may weigh.

- :class:`SecurityHeaders`: a restrictive Content-Security-Policy (only the
  server's own scripts and styles, no inline scripts, no framing), nosniff,
  no referrer, no caching unless a route says otherwise.
- :class:`BodyLimit`: bodies over ``max_body_mb`` (``max_upload_mb`` for
  multipart uploads) get 413, whether announced by Content-Length or
  streamed in chunks.
- :func:`cors_options`: cross-origin calls only from ``cors_origins``; with none
  configured no CORS header is ever sent, so browsers refuse them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TypedDict

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
MIB = 1024 * 1024
# streamed answers: no cache, and no buffering by a proxy in front
STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class SecurityHeaders:
    """Adds :data:`HEADERS` (and ``cache-control: no-store`` when unset) to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", []) if h[0].lower() != b"server"]
                names = {name.lower() for name, _ in headers}
                headers += [h for h in HEADERS if h[0] not in names]
                if b"cache-control" not in names:
                    headers.append((b"cache-control", b"no-store"))
                message = dict(message, headers=headers)
            await send(message)

        await self.app(scope, receive, send_with_headers)


@dataclass(frozen=True, slots=True)
class Limits:
    """The largest bodies accepted, in bytes."""

    body: int
    upload: int

    @classmethod
    def from_mib(cls, body_mb: float, upload_mb: float) -> Limits:
        return cls(int(body_mb * MIB), int(upload_mb * MIB))

    def for_scope(self, scope: Scope) -> int:
        kind = _header(scope, b"content-type") or b""
        return self.upload if kind.lower().startswith(b"multipart/form-data") else self.body


def _header(scope: Scope, name: bytes) -> bytes | None:
    headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
    return next((v for k, v in headers if k.lower() == name), None)


Header = tuple[bytes, bytes]


async def reply(send: Send, status: int, detail: str, headers: tuple[Header, ...] = ()) -> None:
    """A small JSON error response, FastAPI's ``{"detail": ...}`` shape."""
    body = json.dumps({"detail": detail}).encode()
    start = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": [*start, *headers]})
    await send({"type": "http.response.body", "body": body})


class BodyLimit:
    """413 for a body over its limit; 400 for a Content-Length that is no number."""

    def __init__(self, app: ASGIApp, limits: Limits) -> None:
        self.app, self.limits = app, limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limits.for_scope(scope)
        declared = _header(scope, b"content-length")
        if declared is not None and not declared.strip().isdigit():
            await reply(send, 400, "invalid Content-Length")
            return
        if declared is not None and int(declared) > limit:
            await reply(send, 413, f"request body over {limit} bytes")
            return
        try:
            await self.app(scope, *_counting(receive, send, limit))
        except BodyTooLarge:
            pass  # answered 413 already (or the response had started: nothing more to say)


class BodyTooLarge(Exception):
    """Raised into the app when a streamed body passes its limit (the app never sees it all)."""


def _counting(receive: Receive, send: Send, limit: int) -> tuple[Receive, Send]:
    """``receive`` and ``send`` that stop a streamed body at ``limit`` with a 413."""
    state = {"seen": 0, "started": False, "refused": False}

    async def counted_receive() -> Message:
        message = await receive()
        if message["type"] == "http.request":
            state["seen"] += len(message.get("body", b""))
            if state["seen"] > limit:
                if not state["started"] and not state["refused"]:
                    await reply(send, 413, f"request body over {limit} bytes")
                state["refused"] = True  # whatever the app answers now is dropped
                raise BodyTooLarge
        return dict(message)

    async def guarded_send(message: Message) -> None:
        if state["refused"]:
            return
        state["started"] = True
        await send(message)

    return counted_receive, guarded_send


class CorsOptions(TypedDict):
    """The keywords of Starlette's ``CORSMiddleware`` the server sets."""

    allow_origins: list[str]
    allow_methods: list[str]
    allow_headers: list[str]
    allow_credentials: bool
    max_age: int


def cors_options(origins: list[str]) -> CorsOptions | None:
    """CORSMiddleware's options for ``origins`` only; None when there are none (no CORS)."""
    if not origins:
        return None
    return {
        "allow_origins": origins,
        "allow_methods": ["GET", "POST", "PUT", "PATCH", "DELETE"],
        "allow_headers": [
            "Authorization",
            "Content-Type",
            "X-API-Key",
            "X-Workspace",
            "LIGHTRAG-WORKSPACE",
        ],
        "allow_credentials": False,
        "max_age": 600,
    }
