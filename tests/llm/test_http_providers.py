"""Wire formats and error translation of the HTTP providers (mock transport)."""

from __future__ import annotations

import base64
import json

import httpx
import numpy as np
import pytest

from kgrag.errors import (
    ModelRateLimitError,
    ModelRequestError,
    ModelResponseError,
    ModelServerError,
    ModelTimeoutError,
)
from kgrag.llm.base import ChatRequest, ChatResult
from kgrag.llm.ollama import OllamaChatProvider, OllamaEmbeddingProvider
from kgrag.llm.openai import OpenAIChatProvider, OpenAIEmbeddingProvider
from kgrag.llm.rerank import HTTPRerankProvider


class Recorder:
    """A MockTransport handler that records requests and answers from a function."""

    def __init__(self, answer):
        self.answer = answer
        self.requests: list[httpx.Request] = []
        self.bodies: list[dict] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        self.bodies.append(json.loads(request.content or b"{}"))
        return self.answer(request, self.bodies[-1])

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)


def _chat_answer(text: str, finish: str = "stop"):
    return lambda req, body: httpx.Response(
        200,
        json={
            "choices": [
                {"message": {"role": "assistant", "content": text}, "finish_reason": finish}
            ],
            "usage": {"prompt_tokens": 11, "completion_tokens": 3},
        },
    )


async def test_openai_chat_payload_and_result() -> None:
    rec = Recorder(_chat_answer('<think>hmm</think>{"a": 1}'))
    provider = OpenAIChatProvider(
        "m1", base_url="http://h:1/v1", api_key="sk-x", transport=rec.transport
    )
    result = await provider.chat(
        ChatRequest(
            messages=[{"role": "user", "content": "hi"}],
            json_mode=True,
            max_tokens=50,
            temperature=0.2,
        )
    )
    await provider.aclose()
    assert result == ChatResult(
        text='{"a": 1}', prompt_tokens=11, completion_tokens=3, finish_reason="stop"
    )
    request, body = rec.requests[0], rec.bodies[0]
    assert str(request.url) == "http://h:1/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-x"
    assert body == {
        "model": "m1",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0.2,
        "max_tokens": 50,
        "response_format": {"type": "json_object"},
    }
    assert provider.identity == "openai:m1@h:1"


async def test_openai_stream_reads_sse_and_usage() -> None:
    events = [
        {"choices": [{"delta": {"role": "assistant", "content": ""}}]},
        {"choices": [{"delta": {"content": "Hello "}}]},
        {"choices": [{"delta": {"content": "world"}}]},
        {"choices": [{"delta": {}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}},
    ]
    sse = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    rec = Recorder(
        lambda req, body: httpx.Response(
            200, text=sse, headers={"content-type": "text/event-stream"}
        )
    )
    provider = OpenAIChatProvider("m", base_url="http://h/v1", transport=rec.transport)
    usage = ChatResult(text="")
    pieces = [p async for p in provider.stream(ChatRequest(messages=[]), usage=usage)]
    assert pieces == ["Hello ", "world"]
    assert (usage.text, usage.prompt_tokens, usage.completion_tokens, usage.finish_reason) == (
        "Hello world",
        5,
        2,
        "stop",
    )
    assert rec.bodies[0]["stream"] is True
    assert rec.bodies[0]["stream_options"] == {"include_usage": True}


async def test_openai_embeddings_base64_and_float_fallbacks() -> None:
    vectors = np.arange(6, dtype="<f4").reshape(2, 3)

    def b64(req, body):
        data = [
            {"index": i, "embedding": base64.b64encode(v.tobytes()).decode()}
            for i, v in reversed(list(enumerate(vectors)))
        ]
        return httpx.Response(200, json={"data": data})

    rec = Recorder(b64)
    provider = OpenAIEmbeddingProvider(
        "e", base_url="http://h/v1", dimensions=3, transport=rec.transport
    )
    out = await provider.embed(["a", ""])
    assert np.array_equal(out, vectors) and out.dtype == np.float32
    assert rec.bodies[0] == {
        "model": "e",
        "input": ["a", " "],
        "dimensions": 3,
        "encoding_format": "base64",
    }

    def floats_only(req, body):
        if "encoding_format" in body:
            return httpx.Response(400, json={"error": {"message": "unknown encoding_format"}})
        return httpx.Response(200, json={"data": [{"index": 0, "embedding": [1.0, 2.0]}]})

    rec = Recorder(floats_only)
    provider = OpenAIEmbeddingProvider("e", base_url="http://h/v1", transport=rec.transport)
    assert (await provider.embed(["a"])).tolist() == [[1.0, 2.0]]
    assert (await provider.embed(["b"])).tolist() == [[1.0, 2.0]]
    assert [("encoding_format" in b) for b in rec.bodies] == [True, False, False]


def _status(code: int, headers: dict | None = None):
    return lambda req, body: httpx.Response(
        code, json={"error": {"message": f"status {code}"}}, headers=headers or {}
    )


@pytest.mark.parametrize(
    "code,headers,error,after",
    [
        (429, {"retry-after-ms": "250", "Retry-After": "1"}, ModelRateLimitError, 0.25),
        (429, {"Retry-After": "2"}, ModelRateLimitError, 2.0),
        (503, {}, ModelServerError, None),
        (408, {}, ModelTimeoutError, None),
    ],
)
async def test_retryable_statuses(
    code: int, headers: dict, error: type, after: float | None
) -> None:
    provider = OpenAIChatProvider(
        "m", base_url="http://h/v1", transport=Recorder(_status(code, headers)).transport
    )
    with pytest.raises(error) as info:
        await provider.chat(ChatRequest(messages=[]))
    assert info.value.retry_after == after
    assert f"status {code}" in str(info.value)


async def test_client_error_and_bad_bodies() -> None:
    provider = OpenAIChatProvider(
        "m", base_url="http://h/v1", transport=Recorder(_status(401)).transport
    )
    with pytest.raises(ModelRequestError, match="HTTP 401"):
        await provider.chat(ChatRequest(messages=[]))
    garbage = Recorder(lambda req, body: httpx.Response(200, text="<html>"))
    provider = OpenAIChatProvider("m", base_url="http://h/v1", transport=garbage.transport)
    with pytest.raises(ModelResponseError, match="not JSON"):
        await provider.chat(ChatRequest(messages=[]))


@pytest.mark.parametrize(
    "exc,error",
    [
        (httpx.ReadTimeout("slow"), ModelTimeoutError),
        (httpx.ConnectError("refused"), ModelServerError),
    ],
)
async def test_transport_failures_are_translated(exc: Exception, error: type) -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise exc

    provider = OpenAIChatProvider("m", base_url="http://h/v1", transport=httpx.MockTransport(fail))
    with pytest.raises(error) as info:
        await provider.chat(ChatRequest(messages=[]))
    assert info.value.__cause__ is exc


async def test_ollama_chat_stream_and_embed() -> None:
    def answer(req, body):
        if req.url.path == "/api/embed":
            return httpx.Response(200, json={"embeddings": [[0.5, 0.5]] * len(body["input"])})
        if body["stream"]:
            lines = [
                {"message": {"content": "Hel"}, "done": False},
                {"message": {"content": "lo"}, "done": False},
                {
                    "message": {"content": ""},
                    "done": True,
                    "done_reason": "stop",
                    "prompt_eval_count": 7,
                    "eval_count": 2,
                },
            ]
            return httpx.Response(200, text="\n".join(json.dumps(x) for x in lines) + "\n")
        return httpx.Response(
            200,
            json={
                "message": {"content": "{}"},
                "done": True,
                "done_reason": "stop",
                "prompt_eval_count": 4,
                "eval_count": 1,
            },
        )

    rec = Recorder(answer)
    chat = OllamaChatProvider("llama3", base_url="http://h:11434/v1", transport=rec.transport)
    result = await chat.chat(ChatRequest(messages=[], json_mode=True, max_tokens=9))
    assert (result.text, result.prompt_tokens, result.completion_tokens) == ("{}", 4, 1)
    assert rec.bodies[0]["format"] == "json"
    assert rec.bodies[0]["options"] == {"temperature": 0.0, "num_predict": 9}
    assert str(rec.requests[0].url) == "http://h:11434/api/chat"
    usage = ChatResult(text="")
    assert [p async for p in chat.stream(ChatRequest(messages=[]), usage=usage)] == ["Hel", "lo"]
    assert (usage.text, usage.prompt_tokens, usage.completion_tokens) == ("Hello", 7, 2)
    embed = OllamaEmbeddingProvider("nomic", base_url="http://h:11434", transport=rec.transport)
    assert (await embed.embed(["a", "b"])).shape == (2, 2)
    assert chat.identity == "ollama:llama3@h:11434"


async def test_rerank_request_and_order() -> None:
    rec = Recorder(
        lambda req, body: httpx.Response(
            200,
            json={
                "results": [
                    {"index": 0, "relevance_score": 0.1},
                    {"index": 2, "relevance_score": 0.9},
                ]
            },
        )
    )
    provider = HTTPRerankProvider("http://h/v1/rerank", "rr", transport=rec.transport)
    assert await provider.rerank("q", ["a", "b", "c"], top_n=2) == [(2, 0.9), (0, 0.1)]
    assert str(rec.requests[0].url) == "http://h/v1/rerank"
    assert rec.bodies[0] == {"model": "rr", "query": "q", "documents": ["a", "b", "c"], "top_n": 2}
