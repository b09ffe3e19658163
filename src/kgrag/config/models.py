"""The model sections: the chat model, the embedder and the optional reranker.

Each provider may be ``auto``; :class:`~kgrag.config.settings.Settings`
resolves it (``resolved_llm_provider``...) from whether an endpoint or a
key is configured.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class LLMSettings(BaseModel):
    """The chat model: provider, endpoint, limits and sampling."""

    provider: str = Field(
        "auto",
        description=(
            "Chat provider: openai, ollama, fake, none, or auto (openai when an endpoint or key is "
            "configured, else none)."
        ),
    )
    base_url: str | None = Field(
        None, description="Base URL of the chat endpoint (OpenAI: ending in /v1)."
    )
    model: str = Field("gpt-4o-mini", description="Chat model name sent to the provider.")
    api_key: str | None = Field(None, description="API key for the chat endpoint.")
    max_async: int = Field(
        4,
        ge=1,
        description="Most chat calls in flight at once, per KGRag instance (kgrag.Limits shares one budget).",
    )
    timeout: float = Field(
        240.0, gt=0, description="Seconds before one chat call is abandoned and retried."
    )
    max_retries: int = Field(
        6,
        ge=0,
        description=(
            "Retries for 429 / 5xx / timeouts, with exponential backoff honouring Retry-After."
        ),
    )
    max_tokens: int | None = Field(
        None, ge=1, description="Cap on completion tokens per call (stops runaway outputs)."
    )
    temperature: float = Field(
        0.0, ge=0, le=2, description="Sampling temperature for every chat call."
    )
    enable_cache: bool = Field(
        True, description="Cache chat answers keyed by prompt, model identity and parameters."
    )


class EmbeddingSettings(BaseModel):
    """The embedding model: provider, endpoint, vector size and batching."""

    provider: str = Field(
        "auto",
        description=(
            "Embedding provider: openai, ollama, fake, local, or auto (openai when an endpoint or "
            "key is configured, else local)."
        ),
    )
    base_url: str | None = Field(None, description="Base URL of the embedding endpoint.")
    model: str = Field("text-embedding-3-small", description="Embedding model name.")
    api_key: str | None = Field(None, description="API key for the embedding endpoint.")
    dim: int | None = Field(
        None, ge=1, description="Vector size; detected from the first response when unset."
    )
    batch_size: int = Field(32, ge=1, description="Texts per embedding request.")
    max_async: int = Field(8, ge=1, description="Most embedding requests in flight at once.")
    max_tokens: int = Field(
        8192,
        ge=16,
        description=(
            "Longest text the embedding model reads; longer texts are embedded in windows and "
            "averaged."
        ),
    )


class RerankSettings(BaseModel):
    """The optional reranker (Cohere request format; also Jina and vLLM)."""

    provider: str | None = Field(
        None, description="Reranker: cohere (also Jina / vLLM compatible) or unset for none."
    )
    base_url: str | None = Field(
        None, description="Rerank endpoint URL (POST, Cohere/Jina request format)."
    )
    model: str | None = Field(None, description="Rerank model name.")
    api_key: str | None = Field(None, description="Rerank API key.")
