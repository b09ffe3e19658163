"""Serving a chat turn: the workspace it is for (authorized), its answer whole or in pieces.

Errors raised before an answer starts are :class:`ChatError` with the HTTP
status to answer; each API words them its own way. A streamed answer's
first piece is computed before the response starts, so a question that
cannot be answered still gets a plain error status.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncGenerator
from typing import TypeVar

from fastapi import HTTPException, Request
from pydantic import BaseModel, ValidationError

from kgrag.api import KGRag
from kgrag.errors import (
    ConfigError,
    KGRagError,
    ModelError,
    QueryError,
    WorkdirBusyError,
)
from kgrag.query.answer.stream import AnswerStream
from kgrag.server import deps
from kgrag.server.auth import Principal
from kgrag.server.chat.names import ModelName, UnknownModelError
from kgrag.server.chat.turn import ChatTurn, TurnError
from kgrag.server.workspaces import DEFAULT, WorkspaceError

B = TypeVar("B", bound=BaseModel)


class ChatError(KGRagError):
    """A chat request refused or failed, with the HTTP status that says so."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def status_of(exc: KGRagError) -> int:
    """The HTTP status for a failure of the library."""
    if isinstance(exc, ChatError):
        return exc.status
    if isinstance(exc, UnknownModelError):
        return 404
    if isinstance(exc, TurnError | QueryError | ConfigError):
        return 400
    if isinstance(exc, WorkdirBusyError):
        return 503
    if isinstance(exc, ModelError):
        return 502
    return 500


def chat_error(exc: KGRagError) -> ChatError:
    return exc if isinstance(exc, ChatError) else ChatError(status_of(exc), str(exc))


async def read_body(request: Request, shape: type[B]) -> B:
    """The request's JSON body as ``shape``, whatever its content type (Ollama clients vary)."""
    try:
        return shape.model_validate(json.loads(await request.body()))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ChatError(400, f"the body is not JSON: {exc}") from exc
    except ValidationError as exc:
        too_long = any(e["type"] in ("string_too_long", "too_long") for e in exc.errors())
        where = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors()
        )
        raise ChatError(413 if too_long else 400, f"invalid request body: {where}") from exc


def _named_by_request(request: Request) -> str | None:
    """The workspace the path prefix or a header names; None when neither does."""
    if request.scope.get("kgrag_workspace") or any(h in request.headers for h in deps.HEADERS):
        try:
            return deps.workspace_name(request)
        except HTTPException as exc:
            raise ChatError(exc.status_code, str(exc.detail)) from exc
    return None


def request_workspace(request: Request, principal: Principal) -> str | None:
    """The workspace the request names, checked against the caller (403); None if it names none."""
    name = _named_by_request(request)
    if name is not None and not principal.may_use(name):
        raise ChatError(403, f"not allowed to use workspace {name!r}")
    return name


def visible_workspaces(request: Request, principal: Principal) -> list[tuple[str | None, str]]:
    """The workspaces to list as models: (the name's workspace part, the workspace).

    When the request names its workspace, only that one, with no workspace
    part (``kgrag`` is then the request's workspace); else every workspace
    the caller may use (the default one without a part).
    """
    named = request_workspace(request, principal)
    if named is not None:
        return [(None, named)]
    spaces = [n for n in deps.workspaces(request).names() if principal.may_use(n)]
    return [(None if n == DEFAULT else n, n) for n in spaces]


def modified_at(request: Request, workspace: str) -> float:
    """When the workspace's folder last changed (now, for one not made yet)."""
    try:
        return deps.workspaces(request).folder(workspace).stat().st_mtime
    except OSError:
        return time.time()


async def chat_workspace(
    request: Request, principal: Principal, model: ModelName
) -> deps.Workspace:
    """The open workspace a chat request is for: the model's, else the request's, else default."""
    named = request_workspace(request, principal)
    name = model.workspace or named or DEFAULT
    if not principal.may_use(name):
        raise ChatError(403, f"not allowed to use workspace {name!r}")
    if named and name != named:
        raise ChatError(400, f"the model names workspace {name!r}, the request {named!r}")
    try:
        rag = await deps.workspaces(request).get(name)
    except WorkspaceError as exc:
        raise ChatError(404 if "no workspace" in str(exc) else 400, str(exc)) from exc
    return deps.Workspace(name, rag, principal)


async def answer_text(rag: KGRag, turn: ChatTurn) -> str:
    """The whole answer (or context) to ``turn``."""
    try:
        return (await rag.query(turn.question, **turn.overrides())).text
    except KGRagError as exc:
        raise chat_error(exc) from exc


async def answer_pieces(rag: KGRag, turn: ChatTurn) -> AsyncGenerator[str, None]:
    """The answer to ``turn`` in pieces, its first piece already computed (errors: ChatError)."""
    stream = rag.stream(turn.question, **turn.overrides())
    try:
        first = await anext(stream)
    except StopAsyncIteration:
        first = ""
    except KGRagError as exc:
        await stream.aclose()
        raise chat_error(exc) from exc
    except BaseException:
        await stream.aclose()
        raise
    return _pieces(first, stream)


async def _pieces(first: str, stream: AnswerStream) -> AsyncGenerator[str, None]:
    try:
        if first:
            yield first
        async for piece in stream:
            if piece:
                yield piece
    finally:
        await stream.aclose()


def count_tokens(rag: KGRag, text: str) -> int:
    """``text``'s length in the index's tokens (the usage figures of the responses)."""
    return rag.tokenizer.count(text) if text else 0
