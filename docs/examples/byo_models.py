"""Bring your own models: LightRAG-style functions as kgrag's chat, embedding and rerank models.

    python docs/examples/byo_models.py --base-url http://localhost:8000/v1 \\
        --chat-model gpt-4o-mini --embedding-model text-embedding-3-small

Any OpenAI-compatible endpoint serves (OpenAI, vLLM, llama.cpp's server,
Ollama's /v1); ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` are the defaults.
The functions below are the kind a LightRAG user already has; kgrag wraps
them (kgrag.llm.adapters) and puts its answer cache, retries, concurrency
limits and cost ledger around them. See docs/embedding.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from pathlib import Path

import httpx
import numpy as np

from kgrag import KGRag, Settings, adapt_embedding

TEXTS = [
    "Ada Lovelace wrote the first published algorithm, in her notes on the Analytical "
    "Engine of Charles Babbage (1843).",
    "Charles Babbage designed the Analytical Engine, a general-purpose mechanical computer.",
]


def models(base_url: str, api_key: str, chat_model: str, embedding_model: str):
    """An HTTP client and three plain functions calling the endpoint (and a local reranker)."""
    client = httpx.AsyncClient(
        base_url=base_url, headers={"Authorization": f"Bearer {api_key}"}, timeout=60
    )

    async def llm(prompt, system_prompt=None, history_messages=None, **kwargs) -> str:
        messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
        messages += history_messages or []
        messages.append({"role": "user", "content": prompt})
        reply = await client.post(
            "/chat/completions", json={"model": chat_model, "messages": messages}
        )
        reply.raise_for_status()
        return reply.json()["choices"][0]["message"]["content"]

    async def embed(texts: list[str]) -> np.ndarray:
        reply = await client.post("/embeddings", json={"model": embedding_model, "input": texts})
        reply.raise_for_status()
        return np.array([row["embedding"] for row in reply.json()["data"]], dtype=np.float32)

    def rerank(query: str, documents: list[str], top_n: int | None = None) -> list[dict]:
        """Word overlap with the question: a synchronous function works too."""
        words = set(query.lower().split())
        return [
            {"index": i, "relevance_score": len(words & set(doc.lower().split()))}
            for i, doc in enumerate(documents)
        ]

    return client, llm, embed, rerank


async def main(args: argparse.Namespace) -> None:
    client, llm, embed, rerank = models(
        args.base_url, args.api_key, args.chat_model, args.embedding_model
    )
    # The name is what the index records for its vectors: keep it stable.
    embedder = adapt_embedding(embed, name=f"mine:{args.embedding_model}")
    settings = Settings(workdir=Path(args.workdir), extractor="llm")
    try:
        async with KGRag(settings, chat=llm, embed=embedder, rerank=rerank) as rag:
            report = await rag.insert(TEXTS, ids=["ada", "babbage"])
            print(f"indexed {len(report.processed)} document(s)")
            print(await rag.query("Who wrote notes on the Analytical Engine?", mode="mix"))
            costs = rag.models.ledger.snapshot()
            print("calls:", {role: row["calls"] for role, row in costs.items()})
    finally:
        await client.aclose()


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL"))
    p.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY", "none"))
    p.add_argument("--chat-model", default="gpt-4o-mini")
    p.add_argument("--embedding-model", default="text-embedding-3-small")
    p.add_argument("--workdir", default=tempfile.mkdtemp(prefix="kgrag-byo-"))
    args = p.parse_args(argv)
    if not args.base_url:
        p.error("give --base-url (or set OPENAI_BASE_URL)")
    return args


if __name__ == "__main__":
    asyncio.run(main(parse()))
