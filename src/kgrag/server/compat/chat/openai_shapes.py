"""OpenAI's wire format: the chat-completions body, completions, stream chunks, models, errors."""

from __future__ import annotations

import json
import time
import uuid

from pydantic import BaseModel, ConfigDict, Field

from kgrag.server.compat.chat.names import BASE
from kgrag.server.compat.chat.turn import MAX_MESSAGES, MAX_NAME, MAX_TEXT
from kgrag.server.views import JSONObject


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore")  # temperature, max_tokens, tools...: not used


class Part(_Body):
    type: str = Field(max_length=32)
    text: str = Field(default="", max_length=MAX_TEXT)


class Message(_Body):
    role: str = Field(max_length=32)
    content: str | list[Part] | None = Field(default=None, max_length=MAX_TEXT)

    def text(self) -> str:
        """The message's text (text parts joined; images and other parts left out)."""
        if isinstance(self.content, list):
            return "\n".join(p.text for p in self.content if p.type == "text")
        return self.content or ""


class StreamOptions(_Body):
    include_usage: bool = False


class CompletionBody(_Body):
    model: str = Field(max_length=MAX_NAME)
    messages: list[Message] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    stream_options: StreamOptions | None = None


def model_entry(name: str, created: float) -> JSONObject:
    return {"id": name, "object": "model", "created": int(created), "owned_by": BASE}


def completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def completion(cid: str, model: str, text: str, used: dict[str, int]) -> JSONObject:
    """A whole (non-streamed) chat completion."""
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": text, "refusal": None},
        "logprobs": None,
        "finish_reason": "stop",
    }
    return {
        "id": cid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": used,
    }


def chunk(cid: str, model: str, delta: JSONObject, finish: str | None = None) -> JSONObject:
    """One streamed chunk: a delta of the one choice (``finish``: why it ends)."""
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
    }


def usage_chunk(cid: str, model: str, used: dict[str, int]) -> JSONObject:
    """The chunk ``stream_options.include_usage`` asks for: no choices, the usage."""
    return {**chunk(cid, model, {}), "choices": [], "usage": used}


_TYPES = {401: "authentication_error", 403: "permission_error", 404: "not_found_error"}


def error(status: int, message: str) -> JSONObject:
    """OpenAI's error body."""
    kind = _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    code = "model_not_found" if status == 404 else None
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def event(body: JSONObject | str) -> str:
    """One server-sent event (``[DONE]`` as is)."""
    data = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
    return f"data: {data}\n\n"
