"""Bring your own models: plain functions (LightRAG style) as kgrag providers.

kgrag's services take *providers* (see :mod:`kgrag.llm.base`). A user who
already has a function calling their model wraps it here instead of
writing a provider class::

    async def llm(prompt, system_prompt=None, history_messages=None, **kw) -> str: ...
    async def embed(texts: list[str]) -> np.ndarray: ...
    async def rerank(query, documents, top_n=None) -> list[tuple[int, float]]: ...

    rag = KGRag(settings, chat=llm, embed=embed, rerank=rerank)

:class:`~kgrag.KGRag` calls :func:`adapt_chat`, :func:`adapt_embedding` and
:func:`adapt_rerank` itself; call them directly to choose the ``name`` (the
identity that keys the answer cache and that the index records for its
embeddings) or the embedding size. Objects implementing the provider
Protocols pass through unchanged. Synchronous functions work too: they run
in a worker thread so they never block the event loop.

Whatever comes in gets the same stack as a registered provider: cache,
retry, concurrency limit and cost ledger. A function's exception reaches
kgrag as a :class:`~kgrag.errors.ModelError` (see :func:`_invoke` for which
are retried).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, cast

import numpy as np

from kgrag.errors import (
    ConfigError,
    KGRagError,
    ModelError,
    ModelResponseError,
    ModelTimeoutError,
)
from kgrag.llm.base import (
    ChatMessage,
    ChatProvider,
    ChatRequest,
    ChatResult,
    EmbeddingProvider,
    Messages,
    RerankProvider,
    approx_tokens,
)
from kgrag.llm.rerank import ranked

__all__ = [
    "ChatFunction",
    "EmbeddingFunction",
    "RerankFunction",
    "adapt_chat",
    "adapt_embedding",
    "adapt_rerank",
]

# Request details passed to a chat function only when its signature names them.
_CHAT_OPTIONS = ("role", "json_mode", "max_tokens", "temperature", "keyword_extraction")


def function_name(func: Callable[..., object]) -> str:
    """``module.qualname`` of ``func`` (the default identity of an adapted function)."""
    target = func if inspect.isfunction(func) or inspect.ismethod(func) else type(func)
    module = getattr(target, "__module__", None) or "unknown"
    return f"{module}.{getattr(target, '__qualname__', repr(target))}"


def _parameters(func: Callable[..., object]) -> tuple[set[str], bool]:
    """The parameter names of ``func`` and whether it takes ``**kwargs``."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):  # some builtins have no signature
        return set(), True
    names = {p.name for p in params if p.kind is not p.VAR_KEYWORD}
    return names, any(p.kind is p.VAR_KEYWORD for p in params)


def _is_async(func: Callable[..., object]) -> bool:
    """An ``async def`` function, or an object whose ``__call__`` is one."""
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(type(func).__call__)


async def _invoke(
    identity: str, func: Callable[..., object], *args: object, **kwargs: object
) -> object:
    """Await an async ``func``, run a sync one in a worker thread; its errors as kgrag's.

    kgrag's own errors pass through (raise ModelRateLimitError,
    ModelServerError or ModelTimeoutError to have the call retried); a
    ``TimeoutError`` becomes a (retried) ModelTimeoutError; anything else a
    ModelError, not retried: the function knows best whether to retry.
    """
    try:
        if _is_async(func):
            return await cast("Awaitable[object]", func(*args, **kwargs))
        result = await asyncio.to_thread(func, *args, **kwargs)
        return await result if inspect.isawaitable(result) else result
    except KGRagError:
        raise
    except TimeoutError as exc:
        raise ModelTimeoutError(f"{identity}: the function timed out") from exc
    except Exception as exc:
        raise ModelError(f"{identity}: {type(exc).__name__}: {exc}") from exc


def split_messages(
    messages: Sequence[ChatMessage],
) -> tuple[str, str | None, Messages]:
    """(prompt, system prompt, history): the LightRAG view of a chat request.

    The prompt is the last user message; system messages are joined into
    the system prompt; everything else before the prompt is the history.
    """
    system = [str(m.get("content", "")) for m in messages if m.get("role") == "system"]
    turns: Messages = [
        {"role": str(m.get("role")), "content": str(m.get("content", ""))}
        for m in messages
        if m.get("role") != "system"
    ]
    prompt = ""
    if turns and turns[-1]["role"] == "user":
        prompt = turns.pop()["content"]
    return prompt, "\n\n".join(system) or None, turns


class ChatFunction:
    """A chat provider calling ``func(prompt, system_prompt=..., history_messages=...)``.

    ``func`` returns the answer text (or a :class:`~kgrag.llm.base.ChatResult`
    with token counts). The system prompt goes to ``system_prompt`` and the
    earlier turns to ``history_messages`` (LightRAG's names) or ``history``;
    a function without such parameters (and no ``**kwargs``) gets them
    written before the prompt instead. ``role``, ``json_mode``,
    ``max_tokens``, ``temperature`` and ``keyword_extraction`` are passed
    only to a function whose signature names them. Streaming yields the
    whole answer as one piece.
    """

    def __init__(self, func: Callable[..., object], *, name: str | None = None):
        if not callable(func):
            raise ConfigError(
                f"chat= needs a ChatProvider or a function, got {type(func).__name__}"
            )
        self.func = func
        self.identity = name or f"func:{function_name(func)}"
        self._names, any_kw = _parameters(func)
        self._system = "system_prompt" in self._names or any_kw
        self._history = next(
            (n for n in ("history_messages", "history") if n in self._names),
            "history_messages" if any_kw else None,
        )

    def _call_args(self, request: ChatRequest) -> tuple[str, dict[str, object]]:
        """The prompt and the keyword arguments ``func`` is called with."""
        prompt, system, history = split_messages(request.messages)
        kwargs: dict[str, object] = {}
        if self._history is not None:
            kwargs[self._history] = history
        elif history:
            turns = "\n\n".join(f"{t['role']}: {t['content']}" for t in history)
            prompt = f"{turns}\n\nuser: {prompt}"
        if self._system:
            kwargs["system_prompt"] = system
        elif system:
            prompt = f"{system}\n\n{prompt}"
        values = {
            "role": request.role,
            "json_mode": request.json_mode,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "keyword_extraction": request.role == "keywords",
        }
        kwargs.update({k: values[k] for k in _CHAT_OPTIONS if k in self._names})
        return prompt, kwargs

    async def chat(self, request: ChatRequest) -> ChatResult:
        prompt, kwargs = self._call_args(request)
        reply = await _invoke(self.identity, self.func, prompt, **kwargs)
        if isinstance(reply, ChatResult):
            return reply
        if not isinstance(reply, str):
            raise ModelResponseError(
                f"{self.identity}: the chat function returned {type(reply).__name__}, not str"
            )
        tokens = sum(approx_tokens(str(m.get("content", ""))) for m in request.messages)
        return ChatResult(
            text=reply,
            prompt_tokens=tokens,
            completion_tokens=approx_tokens(reply),
            finish_reason="stop",
        )

    async def stream(
        self, request: ChatRequest, usage: ChatResult | None = None
    ) -> AsyncIterator[str]:
        """The whole answer as one piece (a function gives no pieces)."""
        result = await self.chat(request)
        if usage is not None:
            usage.text, usage.finish_reason = result.text, result.finish_reason
            usage.prompt_tokens = result.prompt_tokens
            usage.completion_tokens = result.completion_tokens
        yield result.text

    async def aclose(self) -> None:
        return None


class EmbeddingFunction:
    """An embedding provider calling ``func(texts)`` -> array (or list of lists).

    ``embedding_dim``, when given, is checked against every answer;
    otherwise the first answer sets it. A function naming a ``kind``
    parameter is told whether it embeds a query or documents (asymmetric
    models such as e5 prefix them differently).
    """

    def __init__(
        self,
        func: Callable[..., object],
        *,
        name: str | None = None,
        embedding_dim: int | None = None,
        max_tokens: int = 8192,
    ):
        if not callable(func):
            raise ConfigError(
                f"embed= needs an EmbeddingProvider or a function, got {type(func).__name__}"
            )
        self.func, self.dim, self.max_tokens = func, embedding_dim, max_tokens
        self.identity = name or f"func:{function_name(func)}"
        self._kind = "kind" in _parameters(func)[0]

    async def embed(
        self, texts: list[str], kind: Literal["document", "query"] = "document"
    ) -> np.ndarray:
        options = {"kind": kind} if self._kind else {}
        raw = await _invoke(self.identity, self.func, list(texts), **options)
        try:
            matrix = np.asarray(raw, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise ModelResponseError(f"{self.identity}: embeddings are not numbers") from exc
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise ModelResponseError(
                f"{self.identity}: expected {len(texts)} embeddings, got shape {matrix.shape}"
            )
        if self.dim is None:
            self.dim = int(matrix.shape[1])
        elif matrix.shape[1] != self.dim:
            raise ModelResponseError(
                f"{self.identity}: expected {self.dim}-dimensional embeddings, "
                f"got {matrix.shape[1]}"
            )
        return matrix

    async def aclose(self) -> None:
        return None


def _items(raw: object) -> Iterable[object]:
    """A rerank function's answer as the items it holds (TypeError when it holds none)."""
    if not isinstance(raw, Iterable):
        raise TypeError(f"{type(raw).__name__} is not iterable")
    return raw


def _pair(item: Any) -> tuple[int, float]:
    """(index, score) from a pair or a Cohere-style dict."""
    if isinstance(item, Mapping):
        score = item["relevance_score"] if "relevance_score" in item else item["score"]
        return int(item["index"]), float(score)
    index, score = item
    return int(index), float(score)


class RerankFunction:
    """A rerank provider calling ``func(query, documents, top_n=None)``.

    The function returns ``(index, score)`` pairs or dicts with ``index``
    and ``relevance_score`` (Cohere / Jina shape), in any order; kgrag
    sorts them best first and keeps ``top_n``.
    """

    def __init__(self, func: Callable[..., object], *, name: str | None = None):
        if not callable(func):
            raise ConfigError(
                f"rerank= needs a RerankProvider or a function, got {type(func).__name__}"
            )
        self.func = func
        self.identity = name or f"func:{function_name(func)}"
        names, any_kw = _parameters(func)
        self._top_n = "top_n" in names or any_kw

    async def rerank(
        self, query: str, documents: list[str], top_n: int | None = None
    ) -> list[tuple[int, float]]:
        options = {"top_n": top_n} if self._top_n else {}
        raw = await _invoke(self.identity, self.func, query, list(documents), **options)
        try:
            pairs = [_pair(item) for item in _items(raw)]
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelResponseError(f"{self.identity}: malformed rerank answer") from exc
        return ranked(pairs, len(documents), top_n, self.identity)

    async def aclose(self) -> None:
        return None


# What KGRag(chat=..., embed=..., rerank=...) accepts: a provider, or a function to wrap.
ChatModel = ChatProvider | Callable[..., object]
EmbeddingModel = EmbeddingProvider | Callable[..., object]
RerankModel = RerankProvider | Callable[..., object]


def adapt_chat(model: ChatModel, *, name: str | None = None) -> ChatProvider:
    """``model`` as a chat provider: a :class:`ChatProvider` as it is, a function wrapped.

    ``name`` (the identity keying the answer cache) applies to functions;
    a provider names itself with its ``identity``.
    """
    if isinstance(model, ChatProvider):
        return model
    return ChatFunction(model, name=name)


def adapt_embedding(
    model: EmbeddingModel, *, name: str | None = None, embedding_dim: int | None = None
) -> EmbeddingProvider:
    """``model`` as an embedding provider: an :class:`EmbeddingProvider` as it is, a function wrapped.

    ``name`` is the identity the index records for its vectors: give a
    function a stable one (the default is its module and name).
    """
    if isinstance(model, EmbeddingProvider):
        return model
    return EmbeddingFunction(model, name=name, embedding_dim=embedding_dim)


def adapt_rerank(model: RerankModel, *, name: str | None = None) -> RerankProvider:
    """``model`` as a rerank provider: a :class:`RerankProvider` as it is, a function wrapped."""
    if isinstance(model, RerankProvider):
        return model
    return RerankFunction(model, name=name)
