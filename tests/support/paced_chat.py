"""An OpenAI-compatible chat server that answers at a set pace, for tests of time bounds.

A streamed answer starts at once (status and headers), brings its first
piece after ``first`` seconds and ends ``total`` seconds after the request;
a plain answer comes whole after ``total`` seconds. ``first=None`` never
sends a piece; ``status`` answers every request with that error instead.
Every request body is kept in :attr:`PacedChat.requests`::

    with PacedChat(Pace(first=0.1, total=3.0)) as server:
        server.base_url          # "http://127.0.0.1:PORT/v1"
        server.streamed()        # [True, False, ...] per request
"""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWER = "Ada Lovelace wrote the notes on the Analytical Engine [1]."
KEYWORDS = '{"high_level_keywords": ["notes"], "low_level_keywords": ["Ada Lovelace"]}'


@dataclass
class Pace:
    first: float | None = 0.0  # seconds to a stream's first piece; None: never
    total: float = 0.0  # seconds to the end of any answer
    status: int = 200  # not 200: every request gets this error at once
    text: str = ANSWER  # the answer (a JSON-mode request gets KEYWORDS)
    prompt_tokens: int = 321
    completion_tokens: int = 45
    finish: str = "stop"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, pace: Pace):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.pace = pace
        self.requests: list[dict[str, Any]] = []
        self.stopping = threading.Event()
        self.lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (closed the connection) is no error."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        with self.server.lock:
            self.server.requests.append(body)
        pace, started = self.server.pace, _now()
        if pace.status != 200:
            self._send(pace.status, {"error": {"message": "paced failure", "type": "server"}})
            return
        text = KEYWORDS if body.get("response_format") else pace.text
        if body.get("stream"):
            self._stream(text, started)
            return
        self._wait_until(started + pace.total)
        message = {"role": "assistant", "content": text}
        self._send(
            200,
            {
                "choices": [{"index": 0, "message": message, "finish_reason": pace.finish}],
                "usage": self._usage(),
            },
        )

    def _usage(self) -> dict[str, int]:
        pace = self.server.pace
        return {"prompt_tokens": pace.prompt_tokens, "completion_tokens": pace.completion_tokens}

    def _wait_until(self, when: float) -> None:
        self.server.stopping.wait(max(0.0, when - _now()))

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, text: str, started: float) -> None:
        pace = self.server.pace
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        if pace.first is None:
            self.server.stopping.wait()
            self.close_connection = True
            return
        words = text.split(" ")
        pieces = [w + " " for w in words[:-1]] + [words[-1]]
        for i, piece in enumerate(pieces):
            when = pace.first + (pace.total - pace.first) * i / max(1, len(pieces) - 1)
            self._wait_until(started + (pace.first if i == 0 else when))
            self._event({"choices": [{"index": 0, "delta": {"content": piece}}]})
        self._event({"choices": [{"index": 0, "delta": {}, "finish_reason": pace.finish}]})
        self._event({"choices": [], "usage": self._usage()})
        self._chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")

    def _event(self, payload: dict[str, Any]) -> None:
        self._chunk(f"data: {json.dumps(payload)}\n\n".encode())

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def _now() -> float:
    return time.monotonic()


class PacedChat:
    """The server on a background thread; use as a context manager."""

    def __init__(self, pace: Pace | None = None):
        self._server = _Server(pace or Pace())
        self.port = int(self._server.server_address[1])
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def pace(self) -> Pace:
        return self._server.pace

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._server.lock:
            return list(self._server.requests)

    def streamed(self) -> list[bool]:
        """Per request so far: whether it asked for a stream."""
        return [bool(body.get("stream")) for body in self.requests]

    def __enter__(self) -> PacedChat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()  # held connections end with their daemon threads
