"""Every response body the server tests read, checked for what a client must never see.

The server must name documents by their display names and ids, and
describe a failing model without its address. :class:`BodySweep` wraps
httpx's transports (sync and async, so plain calls, streams, MCP
clients and in-process ASGI calls alike) and records the body of every
response a test reads; :meth:`BodySweep.leaks` then lists the bodies that
hold a forbidden string:

- the absolute path of the test's folders (pytest's base temporary
  folder, under which every ``tmp_path`` and workdir lies);
- a loopback ``host:port`` other than the address the request was sent
  to: the fake or dead model endpoints a server is pointed at.

The autouse fixture in ``conftest.py`` fails a test whose bodies leak.
Responses of the model endpoints themselves (requests sent to a
forbidden address) are not the server's, and are not recorded.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

# A loopback address with a port, as a URL or an error message would write it.
_LOOPBACK = re.compile(r"(?:127\.0\.0\.1|localhost|\[::1\]):(\d{2,5})")


@dataclass(slots=True)
class Body:
    """One response: the request that got it, and the bytes read of it."""

    request: str
    own_port: int | None
    parts: list[bytes] = field(default_factory=list)

    def text(self) -> str:
        return b"".join(self.parts).decode("utf-8", "replace")


class _SyncRecording(httpx.SyncByteStream):
    def __init__(self, inner: Any, body: Body):
        self.inner, self.body = inner, body

    def __iter__(self) -> Iterator[bytes]:
        for part in self.inner:
            self.body.parts.append(part)
            yield part

    def close(self) -> None:
        self.inner.close()


class _AsyncRecording(httpx.AsyncByteStream):
    def __init__(self, inner: Any, body: Body):
        self.inner, self.body = inner, body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self.inner:
            self.body.parts.append(part)
            yield part

    async def aclose(self) -> None:
        await self.inner.aclose()


class BodySweep:
    """Records response bodies while :meth:`installed`; ``forbidden``: paths never to show."""

    def __init__(self, forbidden_paths: list[str]):
        self.forbidden_paths = [p for p in dict.fromkeys(forbidden_paths) if p]
        self.upstream_ports: set[int] = set()
        self.bodies: list[Body] = []

    def forbid_address(self, url_or_port: str | int) -> None:
        """A model endpoint's address (``http://127.0.0.1:PORT/v1`` or the port) no body may hold."""
        if isinstance(url_or_port, int):
            self.upstream_ports.add(url_or_port)
        elif (port := httpx.URL(url_or_port).port) is not None:
            self.upstream_ports.add(port)

    def _body(self, request: httpx.Request) -> Body | None:
        port = request.url.port
        if port is not None and port in self.upstream_ports:
            return None  # the model endpoint's own answer
        body = Body(f"{request.method} {request.url}", port)
        self.bodies.append(body)
        return body

    def install(self, monkeypatch: Any) -> None:
        """Wrap every httpx transport's request handler (undone with ``monkeypatch``)."""
        sweep = self
        for cls in (httpx.HTTPTransport, httpx.MockTransport):
            original = cls.handle_request

            def handle(self: Any, request: httpx.Request, _orig: Any = original) -> Any:
                response = _orig(self, request)
                if (body := sweep._body(request)) is not None:
                    response.stream = _SyncRecording(response.stream, body)
                return response

            monkeypatch.setattr(cls, "handle_request", handle)
        for acls in (httpx.AsyncHTTPTransport, httpx.ASGITransport, httpx.MockTransport):
            aoriginal = acls.handle_async_request

            async def ahandle(self: Any, request: httpx.Request, _orig: Any = aoriginal) -> Any:
                response = await _orig(self, request)
                if (body := sweep._body(request)) is not None:
                    response.stream = _AsyncRecording(response.stream, body)
                return response

            monkeypatch.setattr(acls, "handle_async_request", ahandle)

    def leaks(self) -> list[str]:
        """One line per body that holds a forbidden string: the request and what leaked."""
        found = []
        for body in self.bodies:
            text = body.text()
            hits = [p for p in self.forbidden_paths if p in text]
            hits += [
                m.group(0) for m in _LOOPBACK.finditer(text) if int(m.group(1)) != body.own_port
            ]
            if hits:
                at = text.find(hits[0])
                excerpt = text[max(0, at - 80) : at + 80].replace("\n", " ")
                found.append(f"{body.request}: {sorted(set(hits))} in ...{excerpt}...")
        return found
