"""HTTP reranker in the Cohere / Jina request format.

``POST {base_url}`` with ``{"model", "query", "documents", "top_n"}``;
the answer holds ``results: [{"index", "relevance_score"}]``. Cohere, Jina,
vLLM's ``/rerank`` and most self-hosted rerank servers speak this shape;
``base_url`` is the full endpoint URL (e.g. ``https://api.cohere.com/v2/rerank``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

from kgrag.errors import ConfigError, ModelResponseError
from kgrag.llm import _http

if TYPE_CHECKING:  # pragma: no cover
    from kgrag.config.settings import Settings


class HTTPRerankProvider:
    """A rerank endpoint reached over HTTP."""

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        kind: str = "cohere",
        max_connections: int = 16,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        if not base_url:
            raise ConfigError("a reranker needs rerank_base_url (the full endpoint URL)")
        self.model = model
        self.identity = f"{kind}:{model or 'default'}@{_http.host_of(base_url)}"
        self._url = base_url
        self._client = _http.make_client(
            base_url,
            api_key=api_key,
            timeout=timeout,
            max_connections=max_connections,
            transport=transport,
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> HTTPRerankProvider:
        rerank = settings.rerank
        return cls(
            rerank.base_url or "",
            rerank.model,
            api_key=rerank.api_key,
            timeout=settings.llm.timeout,
            kind=rerank.provider or "cohere",
        )

    async def rerank(
        self, query: str, documents: list[str], top_n: int | None = None
    ) -> list[tuple[int, float]]:
        """(index into documents, relevance score), best first."""
        if not documents:
            return []
        payload: dict[str, object] = {
            "query": query,
            "documents": documents,
            "top_n": top_n or len(documents),
        }
        if self.model:
            payload["model"] = self.model
        body = await _http.post_json(self._client, self._url, payload, self.identity)
        try:
            pairs = [(int(r["index"]), float(r["relevance_score"])) for r in body["results"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelResponseError(f"{self.identity}: malformed rerank answer") from exc
        return ranked(pairs, len(documents), top_n, self.identity)

    async def aclose(self) -> None:
        await self._client.aclose()


def ranked(
    pairs: list[tuple[int, float]], n_documents: int, top_n: int | None, identity: str
) -> list[tuple[int, float]]:
    """A reranker's (index, score) pairs checked and ordered best first, at most ``top_n``."""
    if any(not 0 <= i < n_documents for i, _ in pairs):
        raise ModelResponseError(f"{identity}: rerank index out of range")
    pairs = sorted(pairs, key=lambda p: (-p[1], p[0]))
    return pairs[:top_n] if top_n is not None else pairs
