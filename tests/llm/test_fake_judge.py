"""The fake chat model's judge: readable verdicts on the evaluation's own prompts."""

from __future__ import annotations

import json

from kgrag.evaluation import verdicts
from kgrag.evaluation.prompts import RETRY, correctness_messages, pairwise_messages
from kgrag.llm.base import ChatRequest
from kgrag.llm.fake import FakeChatProvider


async def _ask(messages: list[dict[str, str]]) -> str:
    request = ChatRequest(messages=messages, role="judge", json_mode=True)
    return (await FakeChatProvider().chat(request)).text


async def _grade(references: list[str], answer: str) -> str:
    reply = await _ask(correctness_messages("Who wrote it?", references, answer))
    return verdicts.correctness(reply)[0]


async def test_an_answer_holding_half_a_references_words_is_correct() -> None:
    assert await _grade(["William Shakespeare"], "It was Shakespeare.") == "correct"
    assert await _grade(["Charles John Dickens"], "Dickens, I think.") == "incorrect"  # 1 of 3
    assert await _grade(["Charles Dickens", "Dickens"], "Dickens, I think.") == "correct"
    assert await _grade(["The Tiber"], "A river: the Rhine.") == "incorrect"  # "the" is no word
    assert await _grade(["北京大学"], "答案是北京。") == "correct"  # 2 of 4 characters
    assert await _grade(["北京大学"], "答案是上海。") == "incorrect"


async def test_pairwise_counts_words_per_criterion_ties_to_answer_one() -> None:
    question = "What is Paris?"
    longer = "Paris is the capital and the largest city of France"
    reply = await _ask(pairwise_messages(question, "Paris", longer))
    assert {c: w for c, (w, _) in verdicts.pairwise(reply).items()} == {
        "comprehensiveness": "2",
        "diversity": "2",
        "empowerment": "2",
        "overall": "2",
    }
    # more words but fewer distinct ones: comprehensiveness only, so not overall
    reply = await _ask(pairwise_messages(question, "rain rain rain rain", "dry sunny day"))
    winners = {c: w for c, (w, _) in verdicts.pairwise(reply).items()}
    assert winners == {
        "comprehensiveness": "1",
        "diversity": "2",
        "empowerment": "2",
        "overall": "2",
    }
    # the question's own words empower no one: same counts otherwise, answer 2 adds more
    reply = await _ask(pairwise_messages(question, "Paris is what", "Paris is France"))
    assert verdicts.pairwise(reply)["empowerment"][0] == "2"
    reply = await _ask(pairwise_messages(question, "yes", "no"))
    assert {w for w, _ in verdicts.pairwise(reply).values()} == {"1"}


async def test_the_verdict_is_a_pure_function_of_the_prompt_asked_again_or_not() -> None:
    messages = pairwise_messages("Q?", "Paris is the capital.", "``` a fence ```` inside")
    reply = await _ask(messages)
    assert reply == await _ask(messages)
    again = [
        *messages,
        {"role": "assistant", "content": "Both have merit."},
        {"role": "user", "content": RETRY.format(problem="no JSON object in the reply")},
    ]
    assert await _ask(again) == reply
    assert json.loads(reply)["comprehensiveness"]["reason"] == "3 to 2"  # fences are no words


async def test_a_prompt_of_neither_kind_gets_no_verdict() -> None:
    reply = await _ask([{"role": "user", "content": "Which is better?"}])
    try:
        verdicts.pairwise(reply)
    except ValueError as exc:
        assert "no JSON object" in str(exc)
    else:
        raise AssertionError(f"a verdict was read from {reply!r}")
