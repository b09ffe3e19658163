"""The LLM answer cache (outermost layer of the chat stack).

Answers live in a KVStore namespace (``llm_cache``) as
``{"text", "prompt_tokens", "completion_tokens", "role"}``. The key is a
sha256 over a length-prefixed encoding of everything that shapes the
answer: role, provider identity, messages, JSON mode, temperature,
max_tokens and provider-specific options. Length prefixes make the encoding
unambiguous (no two different requests concatenate to the same bytes).
Truncated answers (``finish_reason == "length"``) are never stored, nor
are answers the caller's judge rejects (see :mod:`kgrag.llm.service`),
which also deletes a stored answer it rejects.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from kgrag.llm.base import ChatRequest, ChatResult
from kgrag.storage.layout import LLM_CACHE
from kgrag.storage.layout.rows import CacheRow
from kgrag.storage.layout.typed import TypedKV

if TYPE_CHECKING:
    from kgrag.storage.base import KVStore

NAMESPACE = LLM_CACHE
_VERSION = "kgrag-llm-cache-1"


def _field(h: hashlib._Hash, value: str) -> None:
    data = value.encode("utf-8", "surrogatepass")
    h.update(len(data).to_bytes(8, "big"))
    h.update(data)


def _text(content: object) -> str:
    return (
        content
        if isinstance(content, str)
        else json.dumps(content, sort_keys=True, ensure_ascii=False)
    )


def cache_key(identity: str, request: ChatRequest) -> str:
    """The cache key of ``request`` sent to the provider named ``identity``."""
    h = hashlib.sha256()
    for value in (_VERSION, request.role, identity, str(len(request.messages))):
        _field(h, value)
    for message in request.messages:
        _field(h, str(message.get("role", "")))
        _field(h, _text(message.get("content", "")))
    _field(h, "json" if request.json_mode else "text")
    _field(h, repr(float(request.temperature)))
    _field(h, "" if request.max_tokens is None else str(request.max_tokens))
    _field(h, json.dumps(request.extra, sort_keys=True, ensure_ascii=False, default=str))
    return h.hexdigest()


class LLMCache:
    """Chat answers stored in a KVStore."""

    def __init__(self, kv: KVStore):
        self.kv = kv
        self.rows = TypedKV(kv, CacheRow)

    async def get(self, key: str) -> ChatResult | None:
        """The cached answer (``cached=True``), or None."""
        row = await self.rows.get(key)
        if not row or not isinstance(row.get("text"), str):
            return None
        return ChatResult(
            text=row["text"],
            prompt_tokens=int(row.get("prompt_tokens", 0)),
            completion_tokens=int(row.get("completion_tokens", 0)),
            finish_reason="stop",
            cached=True,
        )

    async def put(self, key: str, result: ChatResult, role: str, tag: str | None = None) -> bool:
        """Store ``result`` unless it was truncated; True when stored."""
        if result.finish_reason == "length":
            return False
        row: CacheRow = {
            "text": result.text,
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "role": role,
        }
        if tag:
            row["tag"] = tag
        await self.rows.upsert({key: row})
        return True

    async def purge_tags(self, tags: Iterable[str]) -> int:
        """Delete every answer stored with one of ``tags``; returns how many (scans the cache)."""
        wanted = set(tags)
        if not wanted:
            return 0
        keys = await self.kv.keys()
        rows = await self.rows.get_many(keys)
        dead = [k for k, row in zip(keys, rows, strict=False) if row and row.get("tag") in wanted]
        await self.kv.delete(dead)
        return len(dead)

    async def discard(self, key: str) -> None:
        """Forget the answer under ``key`` (a caller rejected it)."""
        await self.kv.delete([key])


class MemoryKV:
    """A dict-backed KVStore (tests, throwaway runs)."""

    def __init__(self, namespace: str = NAMESPACE):
        self.namespace = namespace
        self.data: dict[str, dict[str, object]] = {}

    async def get(self, key: str) -> dict[str, object] | None:
        return self.data.get(key)

    async def get_many(self, keys: list[str]) -> list[dict[str, object] | None]:
        return [self.data.get(k) for k in keys]

    async def upsert(self, items: Mapping[str, Mapping[str, object]]) -> None:
        self.data.update({k: dict(v) for k, v in items.items()})

    async def delete(self, keys: Iterable[str]) -> None:
        for key in keys:
            self.data.pop(key, None)

    async def missing(self, keys: Iterable[str]) -> set[str]:
        return {k for k in keys if k not in self.data}

    async def keys(self) -> list[str]:
        return list(self.data)

    async def count(self) -> int:
        return len(self.data)
