"""The fake providers: deterministic answers in the formats the pipeline reads."""

from __future__ import annotations

import json

import numpy as np

from kgrag.llm.base import ChatRequest, ChatResult
from kgrag.llm.fake import FakeChatProvider, FakeEmbeddingProvider, FakeRerankProvider, fake_vector

TEXT = (
    "Ebenezer Scrooge ran a counting-house in London. The clerk Bob Cratchit "
    "worked for Scrooge. Jacob Marley had been dead for seven years."
)
PROMPT = f"Extract entities and relations from the text.\n```\n{TEXT}\n```"


def _req(role: str, content: str = PROMPT, **kw) -> ChatRequest:
    return ChatRequest(
        messages=[
            {"role": "system", "content": "You extract."},
            {"role": "user", "content": content},
        ],
        role=role,
        **kw,
    )


async def test_extract_delimited_records() -> None:
    result = await FakeChatProvider().chat(_req("extract"))
    lines = result.text.splitlines()
    assert lines[-1] == "<|COMPLETE|>"
    entities = [line.split("<|#|>") for line in lines if line.startswith("entity<|#|>")]
    relations = [line.split("<|#|>") for line in lines if line.startswith("relation<|#|>")]
    names = [e[1] for e in entities]
    assert names == ["Ebenezer Scrooge", "London", "Bob Cratchit", "Scrooge", "Jacob Marley"]
    assert all(len(e) == 4 and e[2] for e in entities)
    assert all(len(r) == 5 for r in relations)
    pairs = {(r[1], r[2]) for r in relations}
    assert ("Ebenezer Scrooge", "London") in pairs and ("Bob Cratchit", "Scrooge") in pairs
    assert not any("Jacob Marley" in p for p in pairs)  # alone in its sentence
    assert "The" not in names and "Extract" not in names  # only the fenced text is read


async def test_extract_json_mode_and_determinism() -> None:
    provider = FakeChatProvider()
    first = await provider.chat(_req("extract", json_mode=True))
    second = await FakeChatProvider().chat(_req("extract", json_mode=True))
    assert first.text == second.text
    data = json.loads(first.text)
    assert {"name", "type", "description"} == set(data["entities"][0])
    assert {"source", "target", "keywords", "description"} == set(data["relationships"][0])
    types = {e["name"]: e["type"] for e in data["entities"]}
    again = json.loads(
        (
            await provider.chat(_req("extract", f"```\n{TEXT[::-1]} London.\n```", json_mode=True))
        ).text
    )
    assert {e["type"] for e in again["entities"] if e["name"] == "London"} == {types["London"]}


async def test_glean_finds_nothing_new() -> None:
    provider = FakeChatProvider()
    assert (await provider.chat(_req("glean"))).text == "<|COMPLETE|>"
    assert json.loads((await provider.chat(_req("glean", json_mode=True))).text) == {
        "entities": [],
        "relationships": [],
    }


async def test_keywords_summary_and_answer() -> None:
    provider = FakeChatProvider()
    kw = json.loads(
        (
            await provider.chat(
                _req("keywords", "Query: What did Bob Cratchit think of Scrooge's business?")
            )
        ).text
    )
    assert kw["low_level_keywords"] == ["Bob Cratchit", "Scrooge"]
    assert "business" in kw["high_level_keywords"] and "what" not in kw["high_level_keywords"]
    summary = (
        await provider.chat(
            _req("summary", "Merge:\n```\nA miser.<SEP>A miser.\n- Owns a counting-house.\n```")
        )
    ).text
    assert summary == "A miser. Owns a counting-house."
    answer = (
        await provider.chat(
            ChatRequest(
                messages=[
                    {"role": "system", "content": "Context:\n```\nfirst line\nsecond line\n```"},
                    {"role": "user", "content": "Who?"},
                ]
            )
        )
    ).text
    assert "> first line" in answer and "> second line" in answer


async def test_token_counts_truncation_and_stream() -> None:
    provider = FakeChatProvider()
    full = await provider.chat(_req("extract"))
    assert full.prompt_tokens == len("You extract.") // 4 + len(PROMPT) // 4
    assert full.completion_tokens == len(full.text) // 4
    cut = await provider.chat(_req("extract", max_tokens=10))
    assert cut.finish_reason == "length" and cut.text == full.text[:40]
    usage = ChatResult(text="")
    pieces = [p async for p in provider.stream(_req("extract"), usage=usage)]
    assert len(pieces) > 1 and "".join(pieces) == full.text == usage.text
    assert usage.completion_tokens == full.completion_tokens


async def test_fake_embeddings() -> None:
    provider = FakeEmbeddingProvider(dim=128)
    out = await provider.embed(
        ["the harbor council met", "the harbor council met today", "quantum chromodynamics", ""]
    )
    assert out.shape == (4, 128) and out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0)
    assert out[0] @ out[1] > 0.7 and abs(out[0] @ out[2]) < 0.5
    assert np.array_equal(out[3], fake_vector("", 128))
    assert np.array_equal(out[0], fake_vector("The Harbor council met!", 128))


async def test_fake_rerank_orders_by_similarity() -> None:
    ranked = await FakeRerankProvider().rerank("harbor council", ["a cat", "the harbor council"], 1)
    assert [i for i, _ in ranked] == [1]
