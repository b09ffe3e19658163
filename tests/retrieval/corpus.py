"""A small hand-written index whose graph every query test knows.

Six documents about firewalls sending alerts to a log platform (the
example of the LightRAG write-up), plus one unrelated cafeteria note.
Nodes, edges, chunks and vectors are written straight through the
storage API, embedded with the deterministic hashing embedder.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from kgrag.llm.cache import LLMCache
from kgrag.llm.embedding import EmbeddingService
from kgrag.llm.fake import FakeChatProvider, FakeEmbeddingProvider, FakeRerankProvider
from kgrag.llm.ledger import Ledger
from kgrag.llm.limiter import PriorityLimiter
from kgrag.llm.service import ChatService, RerankService
from kgrag.retrieval import QueryEngine
from kgrag.storage.base import edge_key
from tests.support.chat import QUICK_RETRY

DIM = 256

# chunk key -> (file path, text)
CHUNKS = {
    "C1": (
        "manuals/fw-a-basic.md",
        "FW-A supports sending alerts to the Log Platform over TLS or UDP. "
        "The FW-A firewall buffers alerts when the Log Platform is unreachable.",
    ),
    "C2": (
        "manuals/fw-b.md",
        "FW-B can also send alerts over TLS. The TLS output of FW-B requires License M.",
    ),
    "C3": (
        "manuals/fw-a-v2.md",
        "With firmware v2, the TLS output of FW-A requires License L. UDP output needs no license.",
    ),
    "C4": (
        "platform/identity.md",
        "The Log Platform authenticates every sender through the Identity Directory.",
    ),
    "C5": (
        "platform/audit.md",
        "Every night the Identity Directory feeds the Audit Report with sender identities.",
    ),
    "C6": ("misc/cafeteria.md", "The cafeteria serves pasta on Mondays and soup on Fridays."),
}

# name -> (type, description, chunk keys)
ENTITIES = {
    "FW-A": ("Device", "FW-A is a firewall that sends alerts to the Log Platform.", ["C1", "C3"]),
    "FW-B": ("Device", "FW-B is a firewall whose TLS output needs a license.", ["C2"]),
    "Log Platform": ("System", "The Log Platform collects alerts from firewalls.", ["C1", "C4"]),
    "TLS": ("Protocol", "TLS is an encrypted transport for alert output.", ["C1", "C2", "C3"]),
    "UDP": ("Protocol", "UDP is a plain transport for alert output.", ["C1", "C3"]),
    "License L": ("Artifact", "License L unlocks TLS output of FW-A on firmware v2.", ["C3"]),
    "License M": ("Artifact", "License M unlocks TLS output of FW-B.", ["C2"]),
    "Identity Directory": (
        "System",
        "The Identity Directory stores sender identities.",
        ["C4", "C5"],
    ),
    "Audit Report": ("Content", "The Audit Report lists sender identities each night.", ["C5"]),
    "Cafeteria": ("Location", "The cafeteria serves pasta and soup.", ["C6"]),
}

# (a, b) -> (keywords, description, weight, chunk keys)
RELATIONS = {
    ("FW-A", "Log Platform"): (
        "alert forwarding, log integration",
        "FW-A sends alerts to the Log Platform over TLS or UDP.",
        2.0,
        ["C1", "C3"],
    ),
    ("FW-A", "License L"): (
        "license dependency, version compatibility",
        "Under firmware v2 the TLS output of FW-A requires License L.",
        1.0,
        ["C3"],
    ),
    ("FW-B", "License M"): (
        "license dependency",
        "The TLS output of FW-B requires License M.",
        1.0,
        ["C2"],
    ),
    ("FW-A", "TLS"): ("protocol support", "FW-A can output alerts over TLS.", 1.0, ["C1", "C3"]),
    ("FW-A", "UDP"): (
        "protocol support",
        "FW-A can output alerts over UDP without a license.",
        1.0,
        ["C1", "C3"],
    ),
    ("FW-B", "TLS"): ("protocol support", "FW-B can output alerts over TLS.", 1.0, ["C2"]),
    ("Identity Directory", "Log Platform"): (
        "sender authentication",
        "The Log Platform authenticates senders through the Identity Directory.",
        1.0,
        ["C4"],
    ),
    ("Audit Report", "Identity Directory"): (
        "nightly reporting",
        "The Identity Directory feeds the Audit Report every night.",
        1.0,
        ["C5"],
    ),
}


def chunk_id(key: str) -> str:
    return "chunk-" + hashlib.md5(CHUNKS[key][1].encode()).hexdigest()


def doc_id(key: str) -> str:
    return "doc-" + hashlib.md5(CHUNKS[key][0].encode()).hexdigest()


def md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


async def build_corpus(storage: Any, embed: Any) -> None:
    """Write the corpus into ``storage`` (graph, vectors, chunks, lexical index)."""
    rows = {
        chunk_id(k): {
            "content": text,
            "tokens": len(text.split()),
            "doc_id": doc_id(k),
            "order": 0,
            "file_path": path,
        }
        for k, (path, text) in CHUNKS.items()
    }
    await storage.kv("text_chunks").upsert(rows)
    ids = list(rows)
    await storage.vectors("chunks").upsert(
        ids,
        await embed.embed([rows[i]["content"] for i in ids]),
        [{"doc_id": rows[i]["doc_id"], "file_path": rows[i]["file_path"]} for i in ids],
    )
    if storage.lexical is not None:
        await storage.lexical.add({i: rows[i]["content"] for i in ids})
    nodes = {
        name: {
            "entity_type": t,
            "description": d,
            "source_ids": [chunk_id(k) for k in keys],
            "file_paths": sorted({CHUNKS[k][0] for k in keys}),
            "extractor": "llm",
            "created_at": 0,
        }
        for name, (t, d, keys) in ENTITIES.items()
    }
    await storage.graph.upsert_nodes(nodes)
    names = list(ENTITIES)
    await storage.vectors("entities").upsert(
        ["ent-" + md5(n) for n in names],
        await embed.embed([f"{n}\n{ENTITIES[n][1]}" for n in names]),
        [{"name": n} for n in names],
    )
    edges = {}
    for (a, b), (kw, desc, weight, keys) in RELATIONS.items():
        src, tgt = edge_key(a, b)
        edges[(src, tgt)] = {
            "src": src,
            "tgt": tgt,
            "weight": weight,
            "keywords": kw,
            "description": desc,
            "directions": [[a, b]],
            "source_ids": [chunk_id(k) for k in keys],
            "file_paths": sorted({CHUNKS[k][0] for k in keys}),
            "extractor": "llm",
            "created_at": 0,
        }
    await storage.graph.upsert_edges(edges)
    pairs = list(edges)
    await storage.vectors("relations").upsert(
        ["rel-" + md5(a + "\x1f" + b) for a, b in pairs],
        await embed.embed(
            [f"{edges[p]['keywords']}\t{p[0]}\n{p[1]}\n{edges[p]['description']}" for p in pairs]
        ),
        [{"src": a, "tgt": b} for a, b in pairs],
    )


class RecordingChat(FakeChatProvider):
    """The fake chat provider, keeping every request it answered."""

    def __init__(self) -> None:
        super().__init__("recording")
        self.requests: list[Any] = []

    async def chat(self, request):
        self.requests.append(request)
        return await super().chat(request)

    def roles(self) -> list[str]:
        return [r.role for r in self.requests]


@dataclass
class Parts:
    """The real service stack around fake providers."""

    storage: Any
    embed: Any
    chat: Any = None
    rerank: Any = None
    chat_provider: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    def engine(
        self, *, chat: bool = True, rerank: bool = False, settings: Any = None
    ) -> QueryEngine:
        return QueryEngine(
            self.storage,
            self.chat if chat else None,
            self.embed,
            self.rerank if rerank else None,
            settings=settings,
        )


def make_parts(storage: Any, chat_provider: Any = None) -> Parts:
    """Services as the façade builds them, over the fake providers."""
    ledger = Ledger()
    embed = EmbeddingService(FakeEmbeddingProvider(dim=DIM), ledger=ledger)
    provider = chat_provider or RecordingChat()
    chat = ChatService(
        provider,
        cache=LLMCache(storage.kv("llm_cache")),
        limiter=PriorityLimiter(4),
        ledger=ledger,
        retry=QUICK_RETRY,  # a failing provider is retried as often, without the real back-off
    )
    rerank = RerankService(FakeRerankProvider(), limiter=PriorityLimiter(4), ledger=ledger)
    return Parts(storage, embed, chat, rerank, provider)
