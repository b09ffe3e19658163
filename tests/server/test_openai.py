"""OpenAI's chat-completions API over real HTTP, through the official ``openai`` client."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import openai
import pytest

from kgrag.server.compat.chat.names import MODES

from .compat_served import KEY_ALL, KEY_ALPHA, KEY_MAIN, bearer, compat_server
from .served import Served

QUESTION = "Who worked with Charles Babbage?"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with compat_server(tmp_path_factory.mktemp("openai") / "w") as served:
        yield served


def client(served: Served, key: str = KEY_ALL, prefix: str = "") -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{served.base_url}{prefix}/v1", api_key=key, max_retries=0)


def ask(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


async def test_models_are_workspaces_times_modes(served: Served) -> None:
    ids = [m.id async for m in client(served).models.list()]
    assert ids[0] == "kgrag" and "kgrag:ppr" in ids and "kgrag/alpha:naive" in ids
    assert len(ids) == 2 * len(MODES) and len(set(ids)) == len(ids)
    main_only = [m.id async for m in client(served, KEY_MAIN).models.list()]
    assert main_only == [i for i in ids if not i.startswith("kgrag/alpha")]
    under_prefix = [m.id async for m in client(served, KEY_ALPHA, "/w/alpha").models.list()]
    assert under_prefix == main_only  # no workspace part: the request's workspace
    assert (await client(served).models.retrieve("kgrag/alpha:ppr")).owned_by == "kgrag"


async def test_a_chat_completion_streams_in_openai_chunks(served: Served) -> None:
    stream = await client(served).chat.completions.create(
        model="kgrag",
        messages=ask(QUESTION),
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [chunk async for chunk in stream]
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens > 0
    answer = "".join(c.choices[0].delta.content or "" for c in chunks[:-1])
    assert "Ada Lovelace worked with Charles Babbage" in answer
    assert len({c.id for c in chunks}) == 1
    whole = await client(served).chat.completions.create(model="kgrag", messages=ask(QUESTION))
    assert whole.choices[0].message.content == answer
    assert whole.choices[0].finish_reason == "stop" and whole.usage.prompt_tokens > 0


def test_the_stream_ends_with_done(served: Served) -> None:
    body = {"model": "kgrag:naive", "messages": ask(QUESTION), "stream": True}
    with httpx.Client(base_url=served.base_url, headers=bearer(KEY_ALL)) as http:
        reply = http.post("/v1/chat/completions", json=body)
    assert reply.headers["content-type"].startswith("text/event-stream")
    events = [e for e in reply.text.split("\n\n") if e]
    assert all(e.startswith("data: ") for e in events)
    assert events[-1] == "data: [DONE]" and '"usage"' not in reply.text


async def test_the_model_chooses_workspace_and_mode(served: Served) -> None:
    alpha = await client(served).chat.completions.create(
        model="kgrag/alpha", messages=ask("Who developed COBOL?")
    )
    assert "Grace Hopper" in alpha.choices[0].message.content
    by_prefix = await client(served, KEY_ALPHA, "/w/alpha").chat.completions.create(
        model="kgrag", messages=ask("Who developed COBOL?")
    )
    assert by_prefix.choices[0].message.content == alpha.choices[0].message.content
    context = await client(served).chat.completions.create(
        model="kgrag:naive", messages=ask("/context " + QUESTION)
    )
    assert context.choices[0].message.content != alpha.choices[0].message.content
    assert "Charles Babbage" in context.choices[0].message.content


async def test_system_and_content_parts_are_read(served: Served) -> None:
    messages = [
        {"role": "system", "content": "Answer in one line."},
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi."},
        {"role": "user", "content": [{"type": "text", "text": QUESTION}]},
    ]
    reply = await client(served).chat.completions.create(model="kgrag:local", messages=messages)
    assert "Charles Babbage" in reply.choices[0].message.content


async def test_wrong_key_forbidden_workspace_unknown_model(served: Served) -> None:
    with pytest.raises(openai.AuthenticationError):
        await client(served, "not-a-key").chat.completions.create(model="kgrag", messages=ask("x"))
    with pytest.raises(openai.AuthenticationError):
        await client(served, "not-a-key").models.list()
    with pytest.raises(openai.PermissionDeniedError):
        await client(served, KEY_MAIN).chat.completions.create(
            model="kgrag/alpha", messages=ask(QUESTION)
        )
    with pytest.raises(openai.PermissionDeniedError):
        await client(served, KEY_MAIN).models.retrieve("kgrag/alpha")
    with pytest.raises(openai.NotFoundError) as unknown:
        await client(served).chat.completions.create(model="gpt-4o", messages=ask(QUESTION))
    assert unknown.value.body["code"] == "model_not_found"
    with pytest.raises(openai.BadRequestError):
        await client(served).chat.completions.create(
            model="kgrag", messages=[{"role": "assistant", "content": "no question"}]
        )
    with pytest.raises(openai.BadRequestError) as two_workspaces:
        await client(served, prefix="/w/alpha").chat.completions.create(
            model="kgrag/default", messages=ask(QUESTION)
        )
    assert "the request 'alpha'" in two_workspaces.value.message


async def test_a_stream_that_fails_midway_ends_with_an_error_event() -> None:
    from kgrag.errors import ModelServerError
    from kgrag.server.routes.openai import _events

    async def pieces():
        yield "The first words"
        raise ModelServerError("openai:m@127.0.0.1:9/v1: HTTP 500: went away")

    events = [e async for e in _events("chatcmpl-1", "kgrag", None, (pieces(), None), 3)]
    assert json.loads(events[1].removeprefix("data: "))["choices"][0]["delta"] == {
        "content": "The first words"
    }
    error = json.loads(events[-1].removeprefix("data: "))
    assert error["error"]["message"] == "the model service kept failing (HTTP 500)"  # no address
    assert error["error"]["type"] == "server_error"
    assert "[DONE]" not in "".join(events)
