"""``/query``, ``/query/stream`` and ``/query/data`` (LightRAG's routes and bodies).

Queries read through the workspace's shared instance, so they see the
documents committed so far and never a commit in progress. The stream is
NDJSON: ``{"references": [...]}`` first (unless ``include_references`` is
false), then ``{"response": piece}`` lines, then one final record with
``done: true``, ``coverage``, ``cost``, ``response_time`` and
``llm_generated``; an error after the first line is an ``{"error": ...}``
line (before it, the usual HTTP error). With ``stream: false`` the
stream is one line holding everything.

A chat model that fails gives the extractive answer, marked
``extractive`` with its ``fallback_reason`` (and ``llm_generated``
false); in mode ``bypass``, which has no other answer, it is an error
status (502, 503 or 504). No error names the model's address
(:func:`kgrag.server.routes.errors.client_message`).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Mapping

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from kgrag.errors import KGRagError
from kgrag.retrieval.answer.stream import AnswerStream
from kgrag.server.access.security import STREAM_HEADERS
from kgrag.server.deps import CurrentWorkspace
from kgrag.server.routes.errors import client_message
from kgrag.server.views import JSONObject
from kgrag.server.views import query as views
from kgrag.server.views.query import AnswerView, DataView
from kgrag.server.views.query_body import QueryBody, QueryDataBody

router = APIRouter(tags=["query"])

NDJSON = "application/x-ndjson"


def _line(record: Mapping[str, object]) -> str:
    return json.dumps(record, ensure_ascii=False, default=str) + "\n"


@router.post("/query", response_model=JSONObject)
async def query(body: QueryBody, ws: CurrentWorkspace) -> AnswerView:
    started = time.perf_counter()
    result = await ws.rag.query(body.query, **body.overrides())
    return views.answer_view(
        result, body.include_references, body.include_chunk_content, time.perf_counter() - started
    )


async def _pieces(
    stream: AnswerStream, first: str | None, body: QueryBody, started: float
) -> AsyncIterator[str]:
    """The NDJSON lines of a started stream (its first piece already read)."""
    try:
        result = stream.result
        if body.include_references and result is not None:
            yield _line(
                {"references": views.reference_views(result.references, body.include_chunk_content)}
            )
        if first is not None:
            yield _line({"response": first})
            async for piece in stream:
                yield _line({"response": piece})
        final = stream.result
        if final is not None:
            seconds = round(time.perf_counter() - started, 4)
            yield _line({"done": True, "response_time": seconds, **views.outcome_fields(final)})
    except KGRagError as exc:
        yield _line({"error": client_message(exc), "error_type": type(exc).__name__})
    finally:
        await stream.aclose()


async def _whole(body: QueryBody, ws: CurrentWorkspace, started: float) -> AsyncIterator[str]:
    result = await ws.rag.query(body.query, **body.overrides())
    view = views.answer_view(
        result, body.include_references, body.include_chunk_content, time.perf_counter() - started
    )
    if view["references"] is None:
        del view["references"]
    yield _line(view)


@router.post("/query/stream", response_class=StreamingResponse)
async def query_stream(body: QueryBody, ws: CurrentWorkspace) -> StreamingResponse:
    started = time.perf_counter()
    if body.stream is False:
        lines = [line async for line in _whole(body, ws, started)]  # errors become HTTP errors
        return StreamingResponse(iter(lines), media_type=NDJSON, headers=STREAM_HEADERS)
    stream = ws.rag.stream(body.query, **body.overrides())
    try:
        first = await anext(stream, None)  # errors before the first line become HTTP errors
    except BaseException:
        await stream.aclose()
        raise
    return StreamingResponse(
        _pieces(stream, first, body, started), media_type=NDJSON, headers=STREAM_HEADERS
    )


@router.post("/query/data", response_model=JSONObject)
async def query_data(body: QueryDataBody, ws: CurrentWorkspace) -> DataView:
    """Structured retrieval (entities, relationships, chunks, references, paths); no answer call."""
    data = await ws.rag.query_data(body.query, trace=body.trace, **body.overrides())
    return views.data_view(data, body.include_chunk_content)
