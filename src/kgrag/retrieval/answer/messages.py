"""Answer prompts: the messages sent to the chat model for an answer.

The answer prompt (built by :mod:`kgrag.retrieval.prompts`) holds everything
that shapes the answer: the context (which is all that retrieval settings
such as mode, top_k or the budgets can change), the response type, extra
instructions, the conversation and the question. So the chat service's
cache, keyed by the messages and the model identity, never serves an
answer to a different query.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kgrag.retrieval import prompts
from kgrag.retrieval.param import QueryParam

if TYPE_CHECKING:
    from kgrag.llm.base import ChatMessage, Messages


def _history(param: QueryParam) -> Messages:
    return [
        {"role": str(t["role"]), "content": str(t["content"])} for t in param.conversation_history
    ]


def answer_messages(question: str, context: str, param: QueryParam, graph: bool = True) -> Messages:
    """The answer prompt: instructions, the conversation, then context and question.

    ``graph`` picks the knowledge-graph wording; without it (no entities or
    relations in the context) the document-excerpt wording.
    """
    build = prompts.answer_messages if graph else prompts.naive_answer_messages
    return build(
        question,
        context,
        response_type=param.response_type,
        user_prompt=param.user_prompt or "",
        history=_history(param),
    )


def bypass_messages(question: str, param: QueryParam) -> Messages:
    """Bypass mode: the conversation and the question, nothing retrieved."""
    system: Messages = (
        [{"role": "system", "content": param.user_prompt}] if param.user_prompt else []
    )
    return [*system, *_history(param), {"role": "user", "content": question}]


def render_prompt(messages: Sequence[ChatMessage]) -> str:
    """The messages as one text (what ``only_need_prompt`` returns)."""
    return "\n\n".join(f"---{m['role']}---\n{m['content']}" for m in messages)
