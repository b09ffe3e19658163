"""Ollama's API (``/api/...``): Open WebUI and Ollama clients talk to the index as to a model.

Models are ``kgrag[/WORKSPACE]:latest`` (any mode may stand for ``latest``:
``kgrag:ppr``; see :mod:`kgrag.server.compat.chat.names`); message prefixes choose
the mode (:mod:`kgrag.server.compat.chat.prefix`). ``/api/chat`` and
``/api/generate`` stream NDJSON lines as Ollama does (``"stream": false``:
one JSON object). Unlike LightRAG, ``/api/generate`` answers from the index
too; ``/bypass`` (or the tag ``:bypass``) asks the chat model alone.
Errors are Ollama's ``{"error": "..."}``.

An answer quoted from the documents (no chat model, or it failed) says
so in its text and in a ``kgrag`` field (``extractive``,
``fallback_reason``) of the final object or line; a failing model with
nothing to stand in (``/bypass``) is an error status (502, 503 or 504).
No error names the model's address.
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
from kgrag.server.compat.chat import ollama_shapes as shape
from kgrag.server.compat.chat.names import LATEST, model_name, parse_model
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
from kgrag.server.compat.chat.turn import ChatTurn, chat_turn, prompt_turn
from kgrag.server.deps import Caller
from kgrag.server.routes.errors import client_message, status_of
from kgrag.server.views import JSONObject

router = APIRouter(prefix="/api", tags=["ollama"])


def _error(exc: KGRagError) -> JSONResponse:
    return JSONResponse({"error": client_message(exc)}, status_code=status_of(exc))


async def _models(request: Request, principal: Principal) -> list[tuple[str, float]]:
    return [
        (model_name(part, LATEST), modified_at(request, space))
        for part, space in await visible_workspaces(request, principal)
    ]


@router.get("/version")
async def version(principal: Caller) -> dict[str, str]:
    return {"version": shape.VERSION}


@router.get("/tags", response_model=None)
async def tags(request: Request, principal: Caller) -> JSONObject | JSONResponse:
    """The models: one per workspace the caller may use."""
    try:
        return {"models": [shape.model_entry(n, t) for n, t in await _models(request, principal)]}
    except KGRagError as exc:
        return _error(exc)


@router.get("/ps", response_model=None)
async def running(request: Request, principal: Caller) -> JSONObject | JSONResponse:
    try:
        return {"models": [shape.running_entry(n, t) for n, t in await _models(request, principal)]}
    except KGRagError as exc:
        return _error(exc)


@router.post("/show", response_model=None)
async def show(request: Request, principal: Caller) -> JSONObject | JSONResponse:
    """A model's details; 404 for a name that is no model."""
    try:
        body = await read_body(request, shape.ShowBody)
        name = body.model or body.name
        ws = await chat_workspace(request, principal, parse_model(name))
        return shape.show_entry(name, modified_at(request, ws.name))
    except KGRagError as exc:
        return _error(exc)


@router.post("/chat")
async def chat(request: Request, principal: Caller) -> Response:
    """Answer the last message from the index (mode: prefix, model tag, else mix)."""
    try:
        body = await read_body(request, shape.ChatBody)
        model = parse_model(body.model)
        if not body.messages:  # Ollama's "load the model" request
            return JSONResponse(shape.final("chat", body.model, "", {}, "load"))
        turn = chat_turn([m.model_dump() for m in body.messages], model, body.system)
        ws = await chat_workspace(request, principal, model)
        return await _answer("chat", body.model, body.stream, ws.rag, turn)
    except KGRagError as exc:
        return _error(exc)


@router.post("/generate")
async def generate(request: Request, principal: Caller) -> Response:
    """Answer the prompt from the index, as ``/api/chat`` answers one message."""
    try:
        body = await read_body(request, shape.GenerateBody)
        model = parse_model(body.model)
        if not body.prompt:  # Ollama's "load the model" request
            return JSONResponse(shape.final("generate", body.model, "", {}, "load"))
        turn = prompt_turn(body.prompt, model, body.system)
        ws = await chat_workspace(request, principal, model)
        return await _answer("generate", body.model, body.stream, ws.rag, turn)
    except KGRagError as exc:
        return _error(exc)


async def _answer(
    kind: shape.Kind, model: str, stream: bool, rag: KGRag, turn: ChatTurn
) -> Response:
    timing = shape.Timing(count_tokens(rag, turn.question))
    if not stream:
        result = await answer_whole(rag, turn)
        timing.tick()
        times = timing.fields(count_tokens(rag, result.text))
        return JSONResponse(shape.final(kind, model, result.text, times) | outcome(result))
    lines = _lines(kind, model, rag, await answer_pieces(rag, turn), timing)
    return StreamingResponse(lines, media_type="application/x-ndjson", headers=STREAM_HEADERS)


async def _lines(
    kind: shape.Kind,
    model: str,
    rag: KGRag,
    answer: tuple[AsyncGenerator[str, None], AnswerStream],
    timing: shape.Timing,
) -> AsyncGenerator[str, None]:
    """The NDJSON lines: one per piece, then the final one; a failure ends with an error line."""
    pieces, stream = answer
    text: list[str] = []
    try:
        async for piece in pieces:
            timing.tick()
            text.append(piece)
            yield shape.line(shape.piece(kind, model, piece))
    except KGRagError as exc:
        yield shape.line({"error": client_message(exc)})
        return
    times = timing.fields(count_tokens(rag, "".join(text)))
    yield shape.line(shape.final(kind, model, "", times) | outcome(stream.result))
