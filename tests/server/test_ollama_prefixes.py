"""Message prefixes, model names and chat turns: how a chat request becomes a query."""

from __future__ import annotations

import pytest

from kgrag.server.compat.chat.errors import TurnError, UnknownModelError
from kgrag.server.compat.chat.names import ModelName, model_name, parse_model
from kgrag.server.compat.chat.prefix import Prefixed, read_prefix
from kgrag.server.compat.chat.turn import chat_turn, prompt_turn


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Who is Ada?", Prefixed("Who is Ada?")),
        ("/local Who is Ada?", Prefixed("Who is Ada?", "local")),
        ("/ppr  Who is Ada?", Prefixed("Who is Ada?", "ppr")),
        ("/path\nWho is Ada?", Prefixed("Who is Ada?", "path")),
        ("/bypass hello", Prefixed("hello", "bypass")),
        ("/context Who is Ada?", Prefixed("Who is Ada?", "mix", context_only=True)),
        ("/naivecontext Ada", Prefixed("Ada", "naive", context_only=True)),
        ("/pprcontext Ada", Prefixed("Ada", "ppr", context_only=True)),
        ("/local[use a table] Ada", Prefixed("Ada", "local", user_prompt="use a table")),
        ("/[in French] Ada", Prefixed("Ada", user_prompt="in French")),
        ("/mix[short]Ada", Prefixed("Ada", "mix", user_prompt="short")),
        ("/etc/hosts is a file", Prefixed("/etc/hosts is a file")),
        ("/bypasscontext Ada", Prefixed("/bypasscontext Ada")),
        ("/unknown Ada", Prefixed("/unknown Ada")),
        ("/local", Prefixed("", "local")),
    ],
)
def test_prefixes(text: str, expected: Prefixed) -> None:
    assert read_prefix(text) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("kgrag", ModelName()),
        ("kgrag:latest", ModelName()),
        ("kgrag:ppr", ModelName(mode="ppr")),
        ("kgrag/manuals", ModelName("manuals")),
        ("kgrag/manuals:naive", ModelName("manuals", "naive")),
    ],
)
def test_model_names(name: str, expected: ModelName) -> None:
    assert parse_model(name) == expected
    assert parse_model(model_name(expected.workspace, expected.mode)) == expected


def test_the_default_workspace_is_named_by_its_own_name_or_by_none() -> None:
    assert parse_model(" kgrag/default:latest ") == ModelName("default")
    assert model_name("default", "ppr") == model_name(None, "ppr") == "kgrag:ppr"


@pytest.mark.parametrize(
    "name", ["llama3", "kgrag:fast", "kgrag/", "kgrag/../etc", "kgrag/a b", "gpt-4o", ""]
)
def test_names_that_are_no_model(name: str) -> None:
    with pytest.raises(UnknownModelError):
        parse_model(name)


def test_a_chat_turn_from_messages() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "tool", "content": "{}"},
        {"role": "user", "content": "/global What changed?"},
    ]
    turn = chat_turn(messages, ModelName(mode="ppr"), system="Answer in English.")
    assert turn.question == "What changed?" and turn.mode == "global"  # the prefix wins
    assert turn.history == messages[1:3]
    assert turn.user_prompt == "Answer in English.\n\nBe brief."
    assert chat_turn(messages[1:2], ModelName(mode="ppr")).mode == "ppr"
    assert chat_turn(messages[1:2], ModelName()).mode == "mix"
    bracketed = prompt_turn("/[in French] Who?", ModelName(), system="Be brief.")
    assert bracketed.user_prompt == "in French"


def test_open_webui_tasks_go_to_the_chat_model_as_they_are() -> None:
    task = "### Task:\nGenerate tags.\n### Chat History:\n<chat_history>\nUSER: /local Ada?\n"
    turn = prompt_turn(task, ModelName(mode="ppr"))
    assert turn.mode == "bypass" and turn.question == task


@pytest.mark.parametrize(
    "messages",
    [[], [{"role": "assistant", "content": "Hi"}], [{"role": "user", "content": "/local  "}]],
)
def test_turns_without_a_question(messages: list[dict[str, str]]) -> None:
    with pytest.raises(TurnError):
        chat_turn(messages, ModelName())
