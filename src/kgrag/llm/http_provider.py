"""The part every HTTP provider shares: model, identity, one pooled client, settings.

:class:`HTTPChatProvider` and :class:`HTTPEmbeddingProvider` differ only in
which settings they read; a vendor module subclasses one of them, names
itself (``vendor``) and its default base URL, and adds the wire format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

import httpx

from kgrag.llm import _http

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from kgrag.config.settings import Settings


class HTTPOptions(TypedDict, total=False):
    """How an HTTP provider connects: what ``settings_kwargs`` reads from the settings."""

    base_url: str | None
    api_key: str | None
    timeout: float
    max_connections: int
    transport: httpx.AsyncBaseTransport | None  # tests answer in-process


class EmbeddingOptions(HTTPOptions, total=False):
    """An embedding provider's options: the connection and the longest text it reads."""

    max_tokens: int


class HTTPProvider:
    """Model name, ``vendor:model@host`` identity and one keep-alive client."""

    vendor = "http"
    default_base_url = ""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 240.0,
        max_connections: int = 32,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        url = self.resolve_base_url(base_url)
        self.model = model
        self.identity = f"{self.vendor}:{model}@{_http.host_of(url)}"
        self._client = _http.make_client(
            url,
            api_key=api_key,
            timeout=timeout,
            max_connections=max_connections,
            transport=transport,
        )

    @classmethod
    def resolve_base_url(cls, base_url: str | None) -> str:
        """The URL requests go to: ``base_url``, else the vendor's default."""
        return base_url or cls.default_base_url

    async def aclose(self) -> None:
        await self._client.aclose()


class HTTPChatProvider(HTTPProvider):
    """A chat provider configured from the ``llm_*`` settings."""

    @classmethod
    def settings_kwargs(cls, settings: Settings) -> HTTPOptions:
        return HTTPOptions(
            base_url=settings.llm.base_url,
            api_key=settings.llm.api_key,
            timeout=settings.llm.timeout,
            max_connections=settings.llm.max_async + 4,
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> HTTPChatProvider:
        return cls(settings.llm.model, **cls.settings_kwargs(settings))


class HTTPEmbeddingProvider(HTTPProvider):
    """An embedding provider configured from the ``embedding_*`` settings.

    ``max_tokens`` is the longest text the model reads; longer texts are
    embedded in windows by the embedding service.
    """

    def __init__(self, model: str, *, max_tokens: int = 8192, **kwargs: Unpack[HTTPOptions]):
        super().__init__(model, **kwargs)
        self.max_tokens = max_tokens

    @classmethod
    def settings_kwargs(cls, settings: Settings) -> EmbeddingOptions:
        return EmbeddingOptions(
            base_url=settings.embedding.base_url,
            api_key=settings.embedding.api_key,
            timeout=settings.llm.timeout,
            max_tokens=settings.embedding.max_tokens,
            max_connections=settings.embedding.max_async + 4,
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> HTTPEmbeddingProvider:
        return cls(settings.embedding.model, **cls.settings_kwargs(settings))
