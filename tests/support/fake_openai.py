"""A fake OpenAI-compatible HTTP server for tests: deterministic replies, faults on demand.

Endpoints (an optional ``/v1`` prefix is accepted on every path):

    POST /v1/chat/completions  plain, and ``"stream": true`` as server-sent events
    POST /v1/embeddings        float lists, or base64 with ``encoding_format``
    GET  /v1/models
    GET  /stats                counters (:class:`support.fake_faults.Stats`)
    POST /stats/reset          zero the counters
    GET|POST /control          read or change the faults, e.g. ``{"error_count": 2}``
    GET  /health

What a chat request gets is described in :mod:`support.fake_replies`, the
faults in :mod:`support.fake_faults`. Token counts are ``len(text) // 4``;
``max_tokens`` cuts a reply with ``finish_reason: "length"``.

In a test::

    with fake_openai(latency=0.01) as server:
        server.base_url            # "http://127.0.0.1:PORT/v1"
        server.control(error_count=2)
        server.stats()["errors_500"]

As a script, ``python tests/support/fake_openai.py --port 0 [--error-rate 0.2 ...]``
prints one JSON line ``{"event": "listening", "base_url": ..., "port": ...}``
and serves until SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import hashlib
import json
import random
import re
import signal
import socket
import struct
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the ``tests.support`` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.fake_faults import Faults, FaultState, Hang, Refusal
from tests.support.fake_replies import approx_tokens, chat_reply, classify, embed, garble, text_of
from tests.support.fake_replies import wants_json as asks_json

CREATED = 1700000000  # a fixed timestamp: the same request gets the same bytes
WORDS_PER_EVENT = 8


def digest(*parts: object) -> int:
    """A 64-bit hash of ``parts``, the same in every process."""
    h = hashlib.blake2b(digest_size=8)
    h.update("\x1f".join(map(str, parts)).encode("utf-8", "surrogatepass"))
    return int.from_bytes(h.digest(), "big")


class BadRequest(Exception):
    """A request the server refuses with 400."""


@dataclasses.dataclass
class ChatPlan:
    """One chat reply, decided before any byte is sent."""

    id: str
    model: str
    text: str
    finish: str
    usage: dict[str, int]
    delay: float


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty list")
    if not all(isinstance(m, dict) for m in messages):
        raise BadRequest("every message must be an object")
    return messages


def _texts(body: dict[str, Any]) -> list[str]:
    given = body.get("input")
    if isinstance(given, str):
        return [given]
    if isinstance(given, list) and all(isinstance(t, str) for t in given):
        return given
    if isinstance(given, list) and all(isinstance(t, list) for t in given):
        return [" ".join(map(str, t)) for t in given]  # pre-tokenised inputs
    raise BadRequest("'input' must be a string or a list of strings")


class FakeApp:
    """The server's behaviour, independent of HTTP."""

    def __init__(self, faults: Faults):
        self.state = FaultState(faults)

    @property
    def faults(self) -> Faults:
        return self.state.faults

    def request_key(self, endpoint: str, body: dict[str, Any]) -> int:
        """The identity of a request: what it asks, not when."""
        if endpoint == "chat":
            messages = _messages(body)
            canon = [[m.get("role"), text_of(m.get("content"))] for m in messages]
            return digest("chat", asks_json(messages, body.get("response_format")), canon)
        return digest("embed", body.get("dimensions"), _texts(body))

    def plan_chat(self, body: dict[str, Any], key: int) -> ChatPlan:
        """Classify, answer, then apply the reply faults (garbage, truncation, max_tokens)."""
        messages = _messages(body)
        kind, as_json = classify(messages), asks_json(messages, body.get("response_format"))
        rng = random.Random(f"{self.faults.seed}|{key}")
        text = chat_reply(kind, messages, as_json, rng)
        text, finish = self._reply_faults(kind, text, key, body, rng)
        prompt = sum(approx_tokens(text_of(m.get("content"))) for m in messages)
        completion = approx_tokens(text)
        self._count_chat(kind, as_json, bool(body.get("stream")), prompt, completion)
        usage = {"prompt_tokens": prompt, "completion_tokens": completion}
        usage["total_tokens"] = prompt + completion
        delay = self.faults.latency + self.faults.per_token * completion
        model = str(body.get("model") or "fake-llm")
        return ChatPlan(f"chatcmpl-{key:016x}", model, text, finish, usage, delay)

    def _reply_faults(
        self, kind: str, text: str, key: int, body: dict[str, Any], rng: random.Random
    ) -> tuple[str, str]:
        state, faults = self.state, self.faults
        if kind in ("extraction", "gleaning") and state.draw("garbage", faults.garbage_rate, key):
            state.count("garbage")
            text = garble(text, rng)
        if state.draw("truncate", faults.truncate_rate, key):
            state.count("truncated")
            return text[: len(text) // 2], "length"
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        if isinstance(limit, int) and limit > 0 and approx_tokens(text) > limit:
            return text[: limit * 4], "length"
        return text, "stop"

    def _count_chat(self, kind: str, as_json: bool, stream: bool, prompt: int, done: int) -> None:
        with self.state.lock:
            stats = self.state.stats
            stats.calls[kind] += 1
            stats.prompt_tokens += prompt
            stats.completion_tokens += done
            stats.json_mode_calls += as_json
            stats.stream_calls += stream

    def embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        """The embeddings answer (floats, or base64 little-endian float32)."""
        texts = _texts(body)
        dim = body.get("dimensions") or self.faults.dim
        if not isinstance(dim, int) or not 0 < dim <= 65536:
            raise BadRequest("'dimensions' must be a positive integer")
        as_b64 = body.get("encoding_format") == "base64"
        data = []
        for i, text in enumerate(texts):
            vector: Any = embed(text, dim, self.faults.seed)
            if as_b64:
                vector = base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode("ascii")
            data.append({"object": "embedding", "index": i, "embedding": vector})
        tokens = sum(approx_tokens(t) for t in texts)
        with self.state.lock:
            stats = self.state.stats
            stats.embedding_requests += 1
            stats.embedding_inputs += len(texts)
            stats.embedding_tokens += tokens
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        model = body.get("model") or "fake-embed"
        return {"object": "list", "data": data, "model": model, "usage": usage}

    def control(self, changes: dict[str, Any]) -> dict[str, Any]:
        """Apply fault changes (all or none) and return the faults now in force."""
        with self.state.lock:
            trial = dataclasses.replace(self.faults)
            try:
                trial.update(changes)
            except ValueError as exc:
                raise BadRequest(str(exc)) from exc
            self.state.faults = trial
            return dataclasses.asdict(trial)


def _event(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {data}\n\n".encode()


def stream_events(plan: ChatPlan, include_usage: bool) -> Iterator[bytes]:
    """The server-sent events of a streamed reply, ``[DONE]`` last."""
    head = {"id": plan.id, "object": "chat.completion.chunk", "created": CREATED}
    head["model"] = plan.model

    def chunk(delta: dict[str, str], finish: str | None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return _event({**head, "choices": [choice]})

    yield chunk({"role": "assistant", "content": ""}, None)
    pieces = re.findall(r"\S+\s*|\s+", plan.text) or [plan.text]
    for start in range(0, len(pieces), WORDS_PER_EVENT):
        yield chunk({"content": "".join(pieces[start : start + WORDS_PER_EVENT])}, None)
    yield chunk({}, plan.finish)
    if include_usage:
        yield _event({**head, "choices": [], "usage": plan.usage})
    yield _event("[DONE]")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # many clients connect at once (the default backlog is 5)

    def __init__(self, address: tuple[str, int], app: FakeApp):
        super().__init__(address, Handler)
        self.app = app
        self.stopping = threading.Event()
        self.open_sockets: set[socket.socket] = set()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (killed, timed out) is no error; anything else is printed."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    """One connection; keep-alive, chunked streaming."""

    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.open_sockets.add(self.connection)

    def finish(self) -> None:
        self.server.open_sockets.discard(self.connection)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read /stats, not an access log."""

    def do_GET(self) -> None:
        routes = {
            "/models": self._models,
            "/stats": lambda: self.server.app.state.stats.snapshot(),
            "/control": lambda: self.server.app.control({}),
            "/health": lambda: {"ok": True},
        }
        self._dispatch(routes)

    def do_POST(self) -> None:
        routes = {
            "/chat/completions": self._chat,
            "/embeddings": self._embeddings,
            "/stats/reset": self._reset,
            "/control": lambda: self.server.app.control(self._body()),
        }
        self._dispatch(routes)

    def _dispatch(self, routes: dict[str, Any]) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        path = path[3:] if path.startswith("/v1/") else path
        self._raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        route = routes.get(path)
        try:
            if route is None:
                raise Refusal(404, f"no route {self.command} {self.path}")
            answer = route()
        except BadRequest as exc:
            self.server.app.state.count("bad_requests")
            self._send_error(Refusal(400, str(exc)))
        except Refusal as exc:
            self._send_error(exc)
        except Hang:
            self.server.stopping.wait(self.server.app.faults.hang_s)
            self.close_connection = True  # dropped without an answer
        except OSError:
            raise
        except Exception as exc:  # a bug here must not hang the client: answer 500
            print(f"fake_openai: {self.command} {self.path}: {exc!r}", file=sys.stderr)
            self._send_error(Refusal(500, f"fake server bug: {exc!r}"))
        else:
            if answer is not None:
                self._send_json(200, answer)

    def _body(self) -> dict[str, Any]:
        try:
            body = json.loads(self._raw or b"{}")
        except ValueError:
            raise BadRequest("the request body is not JSON") from None
        if not isinstance(body, dict):
            raise BadRequest("the request body must be a JSON object")
        return body

    def _models(self) -> dict[str, Any]:
        models = [
            {"id": m, "object": "model", "owned_by": "fake"} for m in ("fake-llm", "fake-embed")
        ]
        return {"object": "list", "data": models}

    def _reset(self) -> dict[str, Any]:
        self.server.app.state.reset()
        return {"ok": True}

    def _chat(self) -> None:
        app, body = self.server.app, self._body()
        key = app.request_key("chat", body)
        app.state.admit("chat", key)
        try:
            plan = app.plan_chat(body, key)
            if not body.get("stream"):
                self.server.stopping.wait(plan.delay)
                self._send_json(200, self._completion(plan))
                return
            self.server.stopping.wait(app.faults.latency)  # time to the first token
            options = body.get("stream_options") or {}
            include = isinstance(options, dict) and bool(options.get("include_usage"))
            self._send_stream(stream_events(plan, include))
        finally:
            app.state.leave("chat")

    @staticmethod
    def _completion(plan: ChatPlan) -> dict[str, Any]:
        message = {"role": "assistant", "content": plan.text}
        choice = {"index": 0, "message": message, "finish_reason": plan.finish}
        return {
            "id": plan.id,
            "object": "chat.completion",
            "created": CREATED,
            "model": plan.model,
            "choices": [choice],
            "usage": plan.usage,
        }

    def _embeddings(self) -> dict[str, Any]:
        app, body = self.server.app, self._body()
        key = app.request_key("embeddings", body)
        app.state.admit("embeddings", key)
        try:
            answer = app.embeddings(body)
            self.server.stopping.wait(app.faults.embed_latency)
            return answer
        finally:
            app.state.leave("embeddings")

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, exc: Refusal) -> None:
        kinds = {400: "invalid_request_error", 404: "not_found", 429: "rate_limit_exceeded"}
        kind = kinds.get(exc.status, "server_error")
        error = {"message": str(exc), "type": kind, "code": kind, "param": None}
        self._send_json(exc.status, {"error": error}, exc.headers)

    def _send_stream(self, events: Iterator[bytes]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        per_token = self.server.app.faults.per_token
        for event in events:
            if per_token:
                self.server.stopping.wait(per_token * approx_tokens(event.decode()))
            self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


class FakeOpenAI:
    """The fake server on a background thread: :meth:`start`, :meth:`stop`, or ``with``."""

    def __init__(self, faults: Faults | None = None, host: str = "127.0.0.1", port: int = 0):
        self.app = FakeApp(faults or Faults())
        self._server = _Server((host, port), self.app)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.host, self.port = host, int(self._server.server_address[1])
        self.base_url = f"http://{host}:{self.port}/v1"
        self._serving = False

    def start(self) -> FakeOpenAI:
        self._serving = True
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake held calls and drop open connections."""
        self._server.stopping.set()
        if self._serving:
            self._server.shutdown()
        for sock in list(self._server.open_sockets):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._server.server_close()

    def serve(self) -> None:
        """Serve on this thread until :meth:`stop` (from a signal handler or another thread)."""
        self._serving = True
        self._server.serve_forever()

    def stats(self) -> dict[str, Any]:
        return self.app.state.stats.snapshot()

    def control(self, **changes: Any) -> dict[str, Any]:
        return self.app.control(changes)

    def reset(self) -> None:
        self.app.state.reset()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def fake_openai(**faults: Any) -> Iterator[FakeOpenAI]:
    """A started in-process server with ``faults`` (names of :class:`Faults`)."""
    with FakeOpenAI(Faults(**faults)) as server:
        yield server


def parse_args(argv: list[str] | None = None) -> tuple[str, int, Faults]:
    """``(host, port, faults)``; every field of :class:`Faults` is a ``--flag``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="bind address (keep it on loopback)")
    parser.add_argument("--port", type=int, default=8000, help="TCP port; 0 lets the OS choose")
    for f in dataclasses.fields(Faults):
        default = f.default
        flag = "--" + f.name.replace("_", "-")
        parser.add_argument(flag, type=type(default), default=default, dest=f.name)
    args = vars(parser.parse_args(argv))
    host, port = args.pop("host"), args.pop("port")
    return host, port, Faults(**args)


def main(argv: list[str] | None = None) -> None:
    host, port, faults = parse_args(argv)
    server = FakeOpenAI(faults, host, port)
    ready = {"event": "listening", "host": host, "port": server.port, "base_url": server.base_url}
    print(json.dumps(ready), flush=True)

    def stop(*_: object) -> None:
        threading.Thread(
            target=server.stop
        ).start()  # shutdown() must not run on the serving thread

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.serve()


if __name__ == "__main__":
    main(sys.argv[1:])
