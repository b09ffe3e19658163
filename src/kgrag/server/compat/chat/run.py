"""Serving a chat turn: the workspace it is for (authorized), its answer whole or in pieces.

Refusals are :class:`~kgrag.server.compat.chat.errors.ChatError` with their HTTP
status; each API words them (and the library's errors) its own way. A
streamed answer's first piece is computed before the response starts, so
a question that cannot be answered still gets a plain error status.

How an answer was made travels beside it (:func:`outcome`): an answer
quoted from the documents because no chat model is set, or because it
failed, is marked ``extractive`` with the reason (its text opens with the
same note). A failure with no answer to stand in (mode ``bypass``) is an
error status, never an answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncGenerator
from typing import TypeVar

from fastapi import HTTPException, Request
from pydantic import BaseModel, ValidationError

from kgrag.api.facade import KGRag
from kgrag.retrieval.answer.stream import AnswerStream
from kgrag.retrieval.param import QueryResult
from kgrag.server import deps
from kgrag.server.access.auth import Principal
from kgrag.server.compat.chat.errors import ChatError
from kgrag.server.compat.chat.names import ModelName
from kgrag.server.compat.chat.turn import ChatTurn
from kgrag.server.views import JSONObject
from kgrag.server.workspaces.pool import DEFAULT, WorkspaceError

B = TypeVar("B", bound=BaseModel)


async def read_body(request: Request, shape: type[B]) -> B:
    """The request's JSON body as ``shape``, whatever its content type (Ollama clients vary)."""
    try:
        return shape.model_validate(json.loads(await request.body()))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ChatError(f"the body is not JSON: {exc}") from exc
    except ValidationError as exc:
        too_long = any(e["type"] in ("string_too_long", "too_long") for e in exc.errors())
        where = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors()
        )
        raise ChatError(f"invalid request body: {where}", 413 if too_long else 400) from exc


def _named_by_request(request: Request) -> str | None:
    """The workspace the path prefix or a header names; None when neither does."""
    if request.scope.get("kgrag_workspace") or any(h in request.headers for h in deps.HEADERS):
        try:
            return deps.workspace_name(request)
        except HTTPException as exc:
            raise ChatError(str(exc.detail), exc.status_code) from exc
    return None


def request_workspace(request: Request, principal: Principal) -> str | None:
    """The workspace the request names, checked against the caller (403); None if it names none."""
    name = _named_by_request(request)
    if name is not None and not principal.may_use(name):
        raise ChatError(f"not allowed to use workspace {name!r}", 403)
    return name


async def visible_workspaces(
    request: Request, principal: Principal
) -> list[tuple[str | None, str]]:
    """The workspaces to list as models: (the name's workspace part, the workspace).

    When the request names its workspace, only that one, with no workspace
    part (``kgrag`` is then the request's workspace); else every workspace
    the caller may use (the default one without a part).
    """
    named = request_workspace(request, principal)
    if named is not None:
        return [(None, named)]
    spaces = [n for n in await deps.workspaces(request).names() if principal.may_use(n)]
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
        raise ChatError(f"not allowed to use workspace {name!r}", 403)
    if named and name != named:
        raise ChatError(f"the model names workspace {name!r}, the request {named!r}")
    try:
        rag = await deps.workspaces(request).get(name)
    except WorkspaceError as exc:
        raise ChatError(str(exc), 404 if "no workspace" in str(exc) else 400) from exc
    return deps.Workspace(name, rag, principal)


async def answer_whole(rag: KGRag, turn: ChatTurn) -> QueryResult:
    """The whole answer (or context) to ``turn`` (its ``text``), and how it was made."""
    return await rag.query(turn.question, **turn.overrides())


def outcome(result: QueryResult | None) -> JSONObject:
    """kgrag's field beside an answer: whether it is extractive, and why."""
    return {
        "kgrag": {
            "extractive": bool(result and result.extractive),
            "fallback_reason": result.fallback_reason if result else None,
            "retrieval_note": result.retrieval_note if result else None,
        }
    }


async def answer_pieces(
    rag: KGRag, turn: ChatTurn
) -> tuple[AsyncGenerator[str, None], AnswerStream]:
    """The answer to ``turn`` in pieces, the first already computed (so its errors come
    first), and its stream (whose ``result`` says how it was made, once it ended)."""
    stream = rag.stream(turn.question, **turn.overrides())
    try:
        first = await anext(stream)
    except StopAsyncIteration:
        first = ""
    except BaseException:
        await stream.aclose()
        raise
    return _pieces(first, stream), stream


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
