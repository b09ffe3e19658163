"""The fake OpenAI-compatible server: its replies are kgrag-readable and its faults happen."""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kgrag.extract.parser import parse_extraction
from kgrag.extract.prompts import extraction_messages, gleaning_message
from kgrag.retrieval.prompts import keywords_messages
from tests.support.fake_openai import FakeOpenAI, fake_openai

TEXT = (
    "Ebenezer Scrooge kept the counting-house with Bob Cratchit. "
    "Scrooge had been the partner of Jacob Marley for many years. "
    "Marley was dead, and Bob Cratchit shivered in the tank."
)
ANSWER = [{"role": "user", "content": "Answer the question: who is Scrooge?"}]


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai() as running:
        yield running


def chat(server: FakeOpenAI, messages: list, timeout: float = 10, **extra) -> httpx.Response:
    body = {"model": "m", "messages": messages, **extra}
    return httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=timeout)


def content(response: httpx.Response) -> str:
    return response.json()["choices"][0]["message"]["content"]


def test_extraction_reply_is_the_texts_graph_in_kgrags_format(server):
    reply = chat(server, extraction_messages(TEXT))
    assert reply.status_code == 200 and content(reply).endswith("<|COMPLETE|>")
    found = parse_extraction(content(reply))
    names = {e.name for e in found.entities}
    # a lone capitalised word opening a sentence ("Marley was dead") is no name
    assert names == {"Ebenezer Scrooge", "Bob Cratchit", "Jacob Marley"}
    pairs = {frozenset((r.source, r.target)) for r in found.relations}
    assert frozenset(("Ebenezer Scrooge", "Bob Cratchit")) in pairs
    assert all(e.description.startswith(e.name) for e in found.entities)
    as_json = json.loads(content(chat(server, extraction_messages(TEXT, fmt="json"))))
    assert {e["name"] for e in as_json["entities"]} == names
    assert server.stats()["calls"]["extraction"] == 2


def test_a_glean_adds_only_names_not_given_before(server):
    first = content(chat(server, extraction_messages(TEXT)))
    given = first.replace("entity<|#|>Jacob Marley", "entity<|#|>Someone Else")
    conversation = [*extraction_messages(TEXT), {"role": "assistant", "content": given}]
    glean = parse_extraction(content(chat(server, [*conversation, gleaning_message()])))
    assert [e.name for e in glean.entities] == ["Jacob Marley"]
    assert server.stats()["calls"]["gleaning"] == 1


def test_keywords_are_json_from_the_question(server):
    reply = content(chat(server, keywords_messages("Why does Ebenezer Scrooge fear the ghost?")))
    keywords = json.loads(reply)
    assert "Ebenezer Scrooge" in keywords["low_level_keywords"]
    assert "ghost" in " ".join(keywords["high_level_keywords"])


def test_the_same_request_gets_the_same_bytes(server):
    messages = extraction_messages(TEXT)
    assert chat(server, messages).content == chat(server, messages).content


def test_rate_limit_count_answers_429_with_retry_after(server):
    server.control(rate_limit_count=2, retry_after=3)
    codes = [chat(server, ANSWER) for _ in range(3)]
    assert [r.status_code for r in codes] == [429, 429, 200]
    assert codes[0].headers["Retry-After"] == "3" and codes[0].headers["retry-after-ms"] == "3000"
    assert codes[0].json()["error"]["type"] == "rate_limit_exceeded"
    stats = server.stats()
    assert stats["rejected_429"] == 2 and stats["chat_calls"] == 1
    assert stats["requests"]["chat"] == 3


def test_error_rate_is_seeded_by_the_request_and_a_retry_may_pass():
    with fake_openai(error_rate=0.5) as server:
        first = [
            chat(server, [{"role": "user", "content": f"q{i}"}]).status_code for i in range(20)
        ]
    with fake_openai(error_rate=0.5) as server:
        again = [
            chat(server, [{"role": "user", "content": f"q{i}"}]).status_code for i in range(20)
        ]
        retried = [chat(server, [{"role": "user", "content": f"q{i}"}]) for i in range(20)]
        errors = server.stats()["errors_500"]
    assert first == again and 500 in first and 200 in first
    assert [r.status_code for r in retried] != first and errors == first.count(500) + sum(
        r.status_code == 500 for r in retried
    )


def test_truncated_reply_is_cut_with_finish_reason_length(server):
    limited = chat(server, ANSWER, max_tokens=3).json()["choices"][0]
    assert limited["finish_reason"] == "length" and len(limited["message"]["content"]) == 12
    whole = content(chat(server, extraction_messages(TEXT)))
    server.control(truncate_rate=1.0)
    cut = chat(server, extraction_messages(TEXT)).json()["choices"][0]
    assert cut["finish_reason"] == "length"
    assert (
        whole.startswith(cut["message"]["content"])
        and "<|COMPLETE|>" not in cut["message"]["content"]
    )
    assert server.stats()["truncated"] == 1


def test_garbage_makes_extraction_replies_malformed_only(server):
    clean, answer = content(chat(server, extraction_messages(TEXT))), content(chat(server, ANSWER))
    server.control(garbage_rate=1.0)
    garbled = content(chat(server, extraction_messages(TEXT)))
    assert garbled != clean and content(chat(server, ANSWER)) == answer
    assert server.stats()["garbage"] == 1


def test_a_hung_call_gets_no_answer_and_the_next_one_does(server):
    server.control(hang_count=1)
    with pytest.raises(httpx.ReadTimeout):
        chat(server, ANSWER, timeout=0.3)
    assert chat(server, ANSWER).status_code == 200
    assert server.stats()["hangs"] == 1


def test_latency_and_concurrency_limit(server):
    server.control(latency=0.3)
    started = time.perf_counter()
    assert chat(server, ANSWER).status_code == 200
    assert time.perf_counter() - started >= 0.3
    server.control(max_concurrency=1)

    async def two() -> list[int]:
        async with httpx.AsyncClient(timeout=10) as client:
            url, body = f"{server.base_url}/chat/completions", {"messages": ANSWER}
            replies = [client.post(url, json=body) for _ in range(2)]
            return sorted(r.status_code for r in await asyncio.gather(*replies))

    assert asyncio.run(two()) == [200, 429]
    assert server.stats()["max_in_flight_chat"] == 1


def test_stream_is_the_plain_reply_in_pieces(server):
    plain = chat(server, ANSWER).json()
    body = {"messages": ANSWER, "stream": True, "stream_options": {"include_usage": True}}
    with httpx.stream("POST", f"{server.base_url}/chat/completions", json=body) as reply:
        events = [line[6:] for line in reply.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    pieces = [c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"]]
    assert len(pieces) > 2 and "".join(pieces) == plain["choices"][0]["message"]["content"]
    assert chunks[-1]["usage"] == plain["usage"] and server.stats()["stream_calls"] == 1


def test_embeddings_are_deterministic_unit_vectors_of_the_asked_size(server):
    url = f"{server.base_url}/embeddings"
    texts = ["the ghost of Christmas past", "the ghost of Christmas future", "a tax form"]
    floats = httpx.post(url, json={"input": texts, "dimensions": 64}).json()["data"]
    b64 = httpx.post(url, json={"input": texts, "dimensions": 64, "encoding_format": "base64"})
    vectors = [d["embedding"] for d in floats]
    decoded = [
        list(struct.unpack("<64f", base64.b64decode(d["embedding"]))) for d in b64.json()["data"]
    ]
    assert all(len(v) == 64 and abs(sum(x * x for x in v) - 1) < 1e-6 for v in vectors)
    assert [x for v in decoded for x in v] == pytest.approx(
        [x for v in vectors for x in v], abs=1e-6
    )

    def cosine(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])
    stats = server.stats()
    assert stats["embedding_requests"] == 2 and stats["embedding_inputs"] == 6


def test_control_refuses_an_unknown_fault(server):
    reply = httpx.post(f"{server.base_url}/control", json={"error_ratio": 0.5})
    assert reply.status_code == 400 and "error_rate" in reply.json()["error"]["message"]
    assert httpx.get(f"{server.base_url}/nowhere").status_code == 404


def test_the_script_prints_its_base_url_and_takes_fault_flags():
    script = Path(__file__).with_name("fake_openai.py")
    cmd = [sys.executable, str(script), "--port", "0", "--error-count", "1", "--dim", "8"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        base_url = json.loads(proc.stdout.readline())["base_url"]
        assert httpx.get(f"{base_url}/control").json()["error_count"] == 1
        assert httpx.post(f"{base_url}/embeddings", json={"input": "x"}).status_code == 500
        vector = httpx.post(f"{base_url}/embeddings", json={"input": "x"}).json()["data"][0]
        assert len(vector["embedding"]) == 8
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
