"""Ollama's wire format: request bodies, model entries and the NDJSON lines of answers.

Field names and order follow Ollama's own server (``/api/chat``,
``/api/generate``, ``/api/tags``, ``/api/ps``, ``/api/show``), so Ollama
clients and Open WebUI read them as from Ollama.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kgrag.server.compat.chat.names import BASE
from kgrag.server.compat.chat.turn import MAX_MESSAGES, MAX_NAME, MAX_TEXT
from kgrag.server.views import JSONObject

VERSION = "0.9.3"  # the Ollama version announced (LightRAG's)
Kind = Literal["chat", "generate"]


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore")  # options, format, keep_alive...: not used


class Message(_Body):
    role: str = Field(max_length=32)
    content: str = Field(default="", max_length=MAX_TEXT)


class ChatBody(_Body):
    model: str = Field(max_length=MAX_NAME)
    messages: list[Message] = Field(default_factory=list, max_length=MAX_MESSAGES)
    system: str | None = Field(default=None, max_length=MAX_TEXT)
    stream: bool = True


class GenerateBody(_Body):
    model: str = Field(max_length=MAX_NAME)
    prompt: str = Field(default="", max_length=MAX_TEXT)
    system: str | None = Field(default=None, max_length=MAX_TEXT)
    stream: bool = True


class ShowBody(_Body):
    model: str = Field(default="", max_length=MAX_NAME)
    name: str = Field(default="", max_length=MAX_NAME)  # older clients' field


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z")


def _details() -> JSONObject:
    return {
        "parent_model": "",
        "format": "kgrag",
        "family": BASE,
        "families": [BASE],
        "parameter_size": "",
        "quantization_level": "",
    }


def model_entry(name: str, modified: float) -> JSONObject:
    """One model of ``/api/tags``."""
    stamp = dt.datetime.fromtimestamp(modified, dt.UTC).isoformat().replace("+00:00", "Z")
    digest = hashlib.sha256(name.encode()).hexdigest()
    return {
        "name": name,
        "model": name,
        "modified_at": stamp,
        "size": 0,
        "digest": digest,
        "details": _details(),
    }


def running_entry(name: str, modified: float) -> JSONObject:
    """One model of ``/api/ps`` (always loaded: it is the index)."""
    entry = model_entry(name, modified)
    del entry["modified_at"]
    return {**entry, "expires_at": "2099-12-31T23:59:59Z", "size_vram": 0}


def show_entry(name: str, modified: float) -> JSONObject:
    """``/api/show`` for model ``name``."""
    return {
        "modelfile": f"# {name}: answers from a kgrag index\n",
        "parameters": "",
        "template": "{{ .Prompt }}",
        "details": _details(),
        "model_info": {"general.architecture": BASE},
        "capabilities": ["completion"],
        "modified_at": model_entry(name, modified)["modified_at"],
    }


@dataclass(slots=True)
class Timing:
    """Nanosecond clock readings and token counts of one answer (Ollama's final-line fields)."""

    prompt_tokens: int = 0
    started: int = field(default_factory=time.perf_counter_ns)
    first: int | None = None
    last: int | None = None

    def tick(self) -> None:
        self.last = time.perf_counter_ns()
        self.first = self.first or self.last

    def fields(self, eval_tokens: int) -> dict[str, int]:
        last = self.last or time.perf_counter_ns()
        first = self.first or last
        return {
            "total_duration": last - self.started,
            "load_duration": 0,
            "prompt_eval_count": self.prompt_tokens,
            "prompt_eval_duration": first - self.started,
            "eval_count": eval_tokens,
            "eval_duration": last - first,
        }


def piece(kind: Kind, model: str, text: str, done: bool = False) -> JSONObject:
    """A line carrying ``text``: ``message`` for chat, ``response`` for generate."""
    body: JSONObject = {"model": model, "created_at": now_iso()}
    if kind == "chat":
        body["message"] = {"role": "assistant", "content": text}
    else:
        body["response"] = text
    body["done"] = done
    return body


def final(
    kind: Kind, model: str, text: str, times: dict[str, int], reason: str = "stop"
) -> JSONObject:
    """The last line (or the whole non-streamed answer, ``text`` set): done, why, and timings."""
    body = piece(kind, model, text, done=True)
    body["done_reason"] = reason
    if kind == "generate":
        body["context"] = []
    return {**body, **times}


def line(body: JSONObject) -> str:
    return json.dumps(body, ensure_ascii=False) + "\n"
