"""Ollama's API over real HTTP, through the official ``ollama`` client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import ollama
import pytest

from .compat_served import KEY_ALL, KEY_ALPHA, KEY_MAIN, bearer, compat_server
from .served import Served

QUESTION = "Who worked with Charles Babbage?"
# Open WebUI's title request: a task prompt quoting the conversation.
TITLE_TASK = (
    "### Task:\nGenerate a concise, 3-5 word title summarizing the chat history.\n"
    "### Chat History:\n<chat_history>\nUSER: Who was Babbage?\n"
    "ASSISTANT: A mathematician.\n</chat_history>"
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with compat_server(tmp_path_factory.mktemp("ollama") / "w") as served:
        yield served


def client(served: Served, key: str = KEY_ALL, prefix: str = "") -> ollama.AsyncClient:
    return ollama.AsyncClient(host=served.base_url + prefix, headers=bearer(key))


async def chat_parts(served: Served, content: str, model: str = "kgrag:latest") -> list:
    message = {"role": "user", "content": content}
    stream = await client(served).chat(model=model, messages=[message], stream=True)
    return [part async for part in stream]


async def test_list_sees_one_model_per_workspace(served: Served) -> None:
    listed = await client(served).list()
    assert [m.model for m in listed.models] == ["kgrag:latest", "kgrag/alpha:latest"]
    assert (await client(served).ps()).models[0].model == "kgrag:latest"
    assert (await client(served).show("kgrag/alpha:latest")).details.family == "kgrag"
    async with httpx.AsyncClient(base_url=served.base_url, headers=bearer(KEY_ALL)) as http:
        assert (await http.get("/api/version")).json()["version"]
    main_only = await client(served, KEY_MAIN).list()
    assert [m.model for m in main_only.models] == ["kgrag:latest"]
    under_prefix = await client(served, KEY_ALPHA, "/w/alpha").list()
    assert [m.model for m in under_prefix.models] == ["kgrag:latest"]  # the request's workspace


async def test_chat_streams_an_answer_from_the_index(served: Served) -> None:
    parts = await chat_parts(served, QUESTION)
    assert len(parts) > 2 and not any(p.done for p in parts[:-1])
    last = parts[-1]
    assert last.done and last.done_reason == "stop" and last.message.content == ""
    assert last.eval_count > 0 and last.prompt_eval_count > 0
    answer = "".join(p.message.content for p in parts)
    assert "Ada Lovelace worked with Charles Babbage" in answer  # quoted from the document
    whole = await client(served).chat(
        model="kgrag", messages=[{"role": "user", "content": QUESTION}], stream=False
    )
    assert whole.done and whole.message.content == answer


async def test_generate_streams_and_answers_whole(served: Served) -> None:
    stream = await client(served).generate(model="kgrag", prompt=QUESTION, stream=True)
    parts = [part async for part in stream]
    assert parts[-1].done and parts[-1].done_reason == "stop"
    answer = "".join(p.response for p in parts)
    assert "Charles Babbage" in answer
    whole = await client(served).generate(model="kgrag", prompt=QUESTION, stream=False)
    assert whole.response == answer and whole.done


async def test_the_model_name_chooses_the_workspace(served: Served) -> None:
    parts = await chat_parts(served, "Who developed COBOL?", model="kgrag/alpha:latest")
    answer = "".join(p.message.content for p in parts)
    assert "Grace Hopper" in answer and "Babbage" not in answer


async def test_prefixes_choose_the_mode_and_the_context(served: Served) -> None:
    context = "".join(p.message.content for p in await chat_parts(served, "/context " + QUESTION))
    answer = "".join(p.message.content for p in await chat_parts(served, QUESTION))
    assert "Charles Babbage" in context and context != answer
    naive = "".join(p.message.content for p in await chat_parts(served, "/naive " + QUESTION))
    assert "Charles Babbage" in naive
    bypass = "".join(p.message.content for p in await chat_parts(served, "/bypass " + QUESTION))
    assert "Lovelace" not in bypass  # nothing retrieved: the chat model alone


async def test_open_webui_title_requests_go_to_the_chat_model(served: Served) -> None:
    reply = await client(served).chat(
        model="kgrag", messages=[{"role": "user", "content": TITLE_TASK}], stream=False
    )
    assert reply.message.content and "Analytical Engine" not in reply.message.content
    retrieved = await client(served).chat(
        model="kgrag", messages=[{"role": "user", "content": "Who was Babbage?"}], stream=False
    )
    assert "Analytical Engine" in retrieved.message.content  # the same words, answered by RAG


async def test_wrong_key_unknown_model_and_forbidden_workspace(served: Served) -> None:
    message = [{"role": "user", "content": QUESTION}]
    with pytest.raises(ollama.ResponseError) as wrong:
        await client(served, "not-a-key").chat(model="kgrag", messages=message)
    assert wrong.value.status_code == 401
    with pytest.raises(ollama.ResponseError) as unknown:
        await client(served).chat(model="llama3:8b", messages=message)
    assert unknown.value.status_code == 404 and "llama3" in unknown.value.error
    with pytest.raises(ollama.ResponseError) as forbidden:
        await client(served, KEY_MAIN).chat(model="kgrag/alpha", messages=message)
    assert forbidden.value.status_code == 403


def test_bad_bodies_get_ollama_errors(served: Served) -> None:
    with httpx.Client(base_url=served.base_url, headers=bearer(KEY_ALL)) as http:
        not_json = http.post("/api/chat", content=b"{nope", headers={"content-type": "text/plain"})
        assert not_json.status_code == 400 and "error" in not_json.json()
        assistant_last = http.post(
            "/api/chat",
            json={"model": "kgrag", "messages": [{"role": "assistant", "content": "hi"}]},
        )
        assert assistant_last.status_code == 400
        empty = http.post(
            "/api/chat",
            json={"model": "kgrag", "messages": [{"role": "user", "content": "/local  "}]},
        )
        assert empty.status_code == 400
        load = http.post("/api/generate", json={"model": "kgrag"})
        assert load.json()["done_reason"] == "load"
        too_long = http.post("/api/generate", json={"model": "kgrag", "prompt": "x" * 70_000})
        assert too_long.status_code == 413


def test_an_open_server_needs_no_key(tmp_path: Path) -> None:
    with compat_server(tmp_path / "w", keys=False) as served:
        reply = ollama.Client(host=served.base_url).chat(
            model="kgrag", messages=[{"role": "user", "content": QUESTION}], stream=False
        )
        assert "Charles Babbage" in reply.message.content


async def test_a_stream_that_fails_midway_ends_with_an_error_line() -> None:
    from kgrag.errors import ModelServerError
    from kgrag.server.compat.chat.ollama_shapes import Timing
    from kgrag.server.routes.ollama import _lines

    async def pieces():
        yield "The first words"
        raise ModelServerError("openai:m@127.0.0.1:9/v1: HTTP 500: went away")

    lines = [
        json.loads(line) async for line in _lines("chat", "kgrag", None, (pieces(), None), Timing())
    ]
    assert lines[0]["message"]["content"] == "The first words" and not lines[0]["done"]
    assert lines[-1] == {"error": "the model service kept failing (HTTP 500)"}  # no address
    assert not any(body.get("done") for body in lines)  # no final line after the error
