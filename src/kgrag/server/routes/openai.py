"""OpenAI's chat-completions API (``/v1/...``): any OpenAI client asks the index.

``GET /v1/models`` lists one model per workspace and mode the caller may
use (``kgrag``, ``kgrag:ppr``, ``kgrag/WORKSPACE:naive``...; see
:mod:`kgrag.server.compat.chat.names`); ``POST /v1/chat/completions`` answers the
last message with the model's workspace and mode (a message prefix such as
``/local`` overrides the mode), whole or streamed as server-sent events
ending with ``data: [DONE]``. Errors are OpenAI's ``{"error": {...}}``.

An answer quoted from the documents (no chat model, or it failed) says
so in its text and in a ``kgrag`` field (``extractive``,
``fallback_reason``) of the completion, or of the streamed chunk that
stops it; a failing model with nothing to stand in (``/bypass``) is an
error status (502, 503 or 504). No error names the model's address.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from kgrag.api.facade import KGRag
from kgrag.errors import KGRagError
from kgrag.retrieval.answer.stream import AnswerStream
from kgrag.server.access.auth import Principal
from kgrag.server.access.security import STREAM_HEADERS
from kgrag.server.compat.chat import openai_shapes as shape
from kgrag.server.compat.chat.names import MODES, model_name, parse_model
from kgrag.server.compat.chat.run import (
    answer_pieces,
    answer_whole,
    chat_workspace,
    count_tokens,
    modified_at,
    outcome,
    read_body,
    visible_workspaces,
)
from kgrag.server.compat.chat.turn import ChatTurn, chat_turn
from kgrag.server.deps import Caller
from kgrag.server.routes.errors import client_message, status_of
from kgrag.server.views import JSONObject

router = APIRouter(prefix="/v1", tags=["openai"])


def _error(exc: KGRagError) -> JSONResponse:
    status = status_of(exc)
    return JSONResponse(shape.error(status, client_message(exc)), status_code=status)


async def _models(request: Request, principal: Principal) -> list[JSONObject]:
    """Each visible workspace as ``kgrag[/W]`` (mix) and once per mode."""
    listed = []
    for part, space in await visible_workspaces(request, principal):
        created = modified_at(request, space)
        for mode in (None, *MODES[1:]):
            listed.append(shape.model_entry(model_name(part, mode), created))
    return listed


@router.get("/models", response_model=None)
async def models(request: Request, principal: Caller) -> JSONObject | JSONResponse:
    try:
        return {"object": "list", "data": await _models(request, principal)}
    except KGRagError as exc:
        return _error(exc)


@router.get("/models/{model:path}", response_model=None)
async def model(model: str, request: Request, principal: Caller) -> JSONObject | JSONResponse:
    """One model; 404 for a name that is no model or a workspace that does not exist."""
    try:
        ws = await chat_workspace(request, principal, parse_model(model))
        return shape.model_entry(model, modified_at(request, ws.name))
    except KGRagError as exc:
        return _error(exc)


@router.post("/chat/completions")
async def completions(request: Request, principal: Caller) -> Response:
    """Answer the last message from the model's workspace, in its mode."""
    try:
        body = await read_body(request, shape.CompletionBody)
        name = parse_model(body.model)
        messages = [{"role": m.role, "content": m.text()} for m in body.messages]
        turn = chat_turn(messages, name)
        ws = await chat_workspace(request, principal, name)
        usage = bool(body.stream_options and body.stream_options.include_usage)
        return await _answer(body.model, body.stream, usage, ws.rag, turn)
    except KGRagError as exc:
        return _error(exc)


async def _answer(model: str, stream: bool, usage: bool, rag: KGRag, turn: ChatTurn) -> Response:
    cid = shape.completion_id()
    prompt = count_tokens(rag, turn.question)
    if not stream:
        result = await answer_whole(rag, turn)
        used = shape.usage(prompt, count_tokens(rag, result.text))
        return JSONResponse(shape.completion(cid, model, result.text, used) | outcome(result))
    pieces, answer = await answer_pieces(rag, turn)
    events = _events(cid, model, rag, (pieces, answer), prompt if usage else None)
    return StreamingResponse(events, media_type="text/event-stream", headers=STREAM_HEADERS)


async def _events(
    cid: str,
    model: str,
    rag: KGRag,
    answer: tuple[AsyncGenerator[str, None], AnswerStream],
    prompt: int | None,
) -> AsyncGenerator[str, None]:
    """The role, one chunk per piece, the stop (and usage), then ``[DONE]``; or an error event."""
    pieces, stream = answer
    yield shape.event(shape.chunk(cid, model, {"role": "assistant", "content": ""}))
    text: list[str] = []
    try:
        async for piece in pieces:
            text.append(piece)
            yield shape.event(shape.chunk(cid, model, {"content": piece}))
    except KGRagError as exc:
        yield shape.event(shape.error(status_of(exc), client_message(exc)))
        return
    yield shape.event(shape.chunk(cid, model, {}, "stop") | outcome(stream.result))
    if prompt is not None:
        used = shape.usage(prompt, count_tokens(rag, "".join(text)))
        yield shape.event(shape.usage_chunk(cid, model, used))
    yield shape.event("[DONE]")
