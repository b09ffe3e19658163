"""Calling an ASGI app in process for its status only, however the route answers.

A route that streams until the client leaves (server-sent events) would
never end under ``httpx.ASGITransport``, which waits for the whole body;
here the client leaves as soon as the request body is sent, and the status
of the response's start is what counts.
"""

from __future__ import annotations

import asyncio
from typing import Any

SETTLE_S = 10.0


async def status_of(
    app: Any, method: str, path: str, headers: dict[str, str], body: bytes = b"{}"
) -> int:
    """The status ``app`` answers ``method path`` with (JSON ``body``, then a disconnect)."""
    sent = False
    status: list[int] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            await asyncio.sleep(0)
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])

    raw = [(b"host", b"127.0.0.1")] + [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    raw += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    path, _, query = path.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": raw,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
    }
    task = asyncio.ensure_future(app(scope, receive, send))
    try:
        await asyncio.wait_for(asyncio.shield(task), SETTLE_S)
    except TimeoutError:
        task.cancel()  # still streaming: the start was sent long ago
    except Exception:
        return status[0] if status else 500
    assert status, f"{method} {path} sent no response"
    return status[0]
