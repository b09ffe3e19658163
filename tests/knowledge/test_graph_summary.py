"""Map-reduce summaries against a small scripted chat."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgrag.errors import ConfigError
from kgrag.knowledge import (
    MergePolicy,
    apply_summaries,
    build_summary_messages,
    merge_entity,
    summarize,
)
from kgrag.knowledge.summary import (
    call_budget,
    fragment_cost,
    group_fragments,
    messages_tokens,
    truncate_tokens,
)
from kgrag.llm.base import ChatRequest
from kgrag.types import SEP
from kgrag.types import ExtractedEntity as E
from tests.support.chat import ScriptedChat

from .strategies import TOKENIZER


def summarizer(answer=lambda frags, n: f"summary number {n}") -> ScriptedChat:
    """A chat answering every summary call with ``answer(fragments, call_number)``."""
    return ScriptedChat(
        then=lambda request, n: answer(sent_fragments(request.messages), n),
        check=_a_summary_call,
    )


def _a_summary_call(request: ChatRequest) -> None:
    assert request.role == "summary" and not request.json_mode


def sent_fragments(messages) -> list[str]:
    """The fragments inside the fenced block of a summary prompt."""
    body = messages[-1]["content"].split("---Descriptions---\n```\n", 1)[1].rsplit("\n```", 1)[0]
    return [json.loads(line)["description"] for line in body.splitlines() if line]


def policy(context: int = 12000, **kw) -> MergePolicy:
    return MergePolicy(summary_context_size=context, tokenizer=TOKENIZER, **kw)


def words(n: int, tag: str = "w") -> str:
    return " ".join(f"{tag}{i % 10}" for i in range(n))


def run(coro):
    return asyncio.run(coro)


def test_prompt_layout():
    msgs = build_summary_messages("Alice", ["one", 'two "quoted"'], "French", 300, "entity")
    user = msgs[-1]["content"]
    assert msgs[0]["role"] == "system" and msgs[-1]["role"] == "user"
    assert "\nName: Alice\n" in user and "\n---Descriptions---\n```\n" in user
    everything = "\n".join(m["content"] for m in msgs)
    assert "French" in everything and "300 tokens" in everything
    assert sent_fragments(msgs) == ["one", 'two "quoted"']
    rel = build_summary_messages(("A", "B"), ["x"], "English", 600, "relation")
    assert "relation" in rel[-1]["content"] and "A -- B" in rel[-1]["content"]


def test_small_input_is_one_call():
    chat = summarizer()
    out = run(summarize("Alice", ["a", "b", "c"], chat=chat, policy=policy(), kind="entity"))
    assert out == "summary number 1"
    assert len(chat.calls) == 1 and sent_fragments(chat.messages[0]) == ["a", "b", "c"]


def test_large_input_call_count_and_sizes():
    p = policy(context=1500)
    frags = [words(100, f"f{i}_") for i in range(40)]
    chat = summarizer()
    run(summarize("Alice", frags, chat=chat, policy=p))
    budget = call_budget("Alice", "entity", "English", p)
    groups = group_fragments([fragment_cost(TOKENIZER, f) for f in frags], budget)
    expected_map = sum(1 for g in groups if len(g) >= 2)
    assert expected_map > 2
    assert len(chat.calls) == expected_map + 1  # the partial summaries fit one final call
    assert all(messages_tokens(TOKENIZER, c) <= 1500 for c in chat.messages)
    assert sent_fragments(chat.messages[-1])[0].startswith("summary number")


def test_oversized_pair_is_truncated_into_one_call():
    p = policy(context=400)
    chat = summarizer()
    run(summarize("A", [words(900, "a"), words(900, "b")], chat=chat, policy=p))
    assert len(chat.calls) == 1
    assert messages_tokens(TOKENIZER, chat.messages[0]) <= 400


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 700), min_size=1, max_size=30),
    st.integers(300, 3000),
    st.integers(1, 900),
)
def test_map_reduce_never_exceeds_context(sizes, context, answer_len):
    p = policy(context=context)
    chat = summarizer(lambda frags, n: words(answer_len, f"s{n}_"))
    frags = [words(n, f"f{i}_") for i, n in enumerate(sizes)]
    out = run(summarize("X", frags, chat=chat, policy=p))
    assert out.startswith(f"s{len(chat.calls)}_")
    assert all(messages_tokens(TOKENIZER, c) <= context for c in chat.messages)
    assert len(chat.calls) <= max(1, len(frags) - 1)
    if len(frags) >= 2:
        assert all(len(sent_fragments(c)) >= 2 for c in chat.messages)


def test_empty_answer_falls_back_to_joined_fragments():
    p = policy(summary_max_tokens=5)
    chat = summarizer(lambda frags, n: "   ")
    frags = ["alpha beta gamma", "delta epsilon zeta"]
    out = run(summarize("A", frags, chat=chat, policy=p))
    assert out == truncate_tokens(TOKENIZER, SEP.join(frags), 5)
    assert TOKENIZER.count(out) <= 5


def test_think_block_is_dropped():
    chat = summarizer(lambda frags, n: "<think>hmm</think>\n Final text. ")
    assert run(summarize("A", ["x", "y"], chat=chat, policy=policy())) == "Final text."


def test_tiny_context_is_a_config_error():
    with pytest.raises(ConfigError):
        run(summarize("A", ["x"] * 5, chat=summarizer(), policy=policy(context=50)))


def _plans(p):
    out = []
    for name in ("A", "B", "C"):
        frags = [E(name, "T", f"{name} fact {i}", f"c{i}") for i in range(3)]
        out.append(merge_entity(name, None, frags, p, 0.0, "llm"))
    out.append(merge_entity("D", None, [E("D", "T", "only")], p, 0.0, "llm"))
    return out


def test_apply_summaries_runs_concurrently_and_writes_descriptions():
    p = policy(force_llm_summary_on_merge=3)
    plans = _plans(p)
    chat = summarizer(lambda frags, n: "S:" + frags[0].split()[0])
    assert run(apply_summaries(plans, chat, policy=p)) == 3
    assert [pl.data["description"] for pl in plans] == ["S:A", "S:B", "S:C", "only"]
    assert all(pl.needs_summary is None for pl in plans)
    assert chat.max_active == 3


def test_apply_summaries_without_chat_truncates():
    p = policy(force_llm_summary_on_merge=3, summary_max_tokens=4)
    plans = _plans(p)
    run(apply_summaries(plans, None, policy=p))
    assert plans[0].data["description"] == truncate_tokens(
        TOKENIZER, SEP.join(plans[0].fragments), 4
    )
    assert plans[3].data["description"] == "only"
