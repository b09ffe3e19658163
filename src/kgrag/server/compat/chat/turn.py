"""One chat request, whichever API it came by: the question, the conversation, the parameters.

The last message is the question (it must be the user's); the messages
before it are the conversation, shown to the model only. System messages
(and Ollama's ``system`` field) become the answer's extra instructions,
unless the question's prefix gives its own. Open WebUI's title, tag and
follow-up requests (a task prompt quoting ``<chat_history>``) are answered
by the chat model directly (mode ``bypass``), as LightRAG does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kgrag.server.compat.chat.errors import TurnError
from kgrag.server.compat.chat.names import DEFAULT_MODE, ModelName
from kgrag.server.compat.chat.prefix import read_prefix

# Request limits (LightRAG's order of size): characters in one message, messages per request.
MAX_TEXT = 64 * 1024
MAX_MESSAGES = 128
MAX_NAME = 200  # a model name

# What Open WebUI's title/tag/follow-up task prompts hold (LightRAG's test).
_UI_TASK = re.compile(r"\n<chat_history>\nUSER:")


_SYSTEM = ("system", "developer")  # OpenAI's newer name for the system role
_CONVERSATION = ("user", "assistant")  # the roles kept as the conversation (tool calls are not)


@dataclass(slots=True)
class ChatTurn:
    """A question and how to answer it."""

    question: str
    mode: str = DEFAULT_MODE
    history: list[dict[str, str]] = field(default_factory=list)
    context_only: bool = False
    user_prompt: str | None = None

    def overrides(self) -> dict[str, Any]:
        """The :class:`~kgrag.retrieval.param.QueryParam` fields this turn sets."""
        return {
            "mode": self.mode,
            "conversation_history": self.history,
            "only_need_context": self.context_only,
            "user_prompt": self.user_prompt,
        }


def chat_turn(
    messages: list[dict[str, str]], model: ModelName, system: str | None = None
) -> ChatTurn:
    """The turn ``messages`` (role and text each) ask for, with ``model``'s mode as default."""
    if not messages or messages[-1]["role"] != "user":
        raise TurnError("the last message must be the user's question")
    systems = [m["content"] for m in messages if m["role"] in _SYSTEM and m["content"].strip()]
    if system and system.strip():
        systems.insert(0, system)
    history = [m for m in messages[:-1] if m["role"] in _CONVERSATION]
    return prompt_turn(messages[-1]["content"], model, "\n\n".join(systems) or None, history)


def prompt_turn(
    text: str,
    model: ModelName,
    system: str | None = None,
    history: list[dict[str, str]] | None = None,
) -> ChatTurn:
    """The turn one prompt asks for (Ollama's ``/api/generate``, the last chat message)."""
    if _UI_TASK.search(text):
        return ChatTurn(text, "bypass", history or [], user_prompt=system)
    read = read_prefix(text)
    if not read.question.strip():
        raise TurnError("the question is empty")
    mode = read.mode or model.mode or DEFAULT_MODE
    prompt = read.user_prompt if read.user_prompt is not None else system
    return ChatTurn(read.question, mode, history or [], read.context_only, prompt)
