"""Three small documents on different subjects that share entities, indexed for real.

Astronomy and music share "Galileo Galilei"; music and food share
"Florence"; astronomy and food share "Padua". Indexed with the built-in
fake models (or the NLP extractor), small chunks so each document has
one or two.
"""

from __future__ import annotations

from typing import Any

from kgrag.api.facade import KGRag
from kgrag.config.settings import Settings
from kgrag.ingest.ids import source_doc_id
from kgrag.storage.base import edge_key
from kgrag.storage.layout import support_key
from tests.support.settings import fake_settings

# source id -> (file path, metadata, text)
DOCS = {
    "astro": (
        "notes/astronomy.md",
        {"subject": "astronomy", "lang": "en"},
        (
            "Galileo Galilei observed the moons of Jupiter from Padua in 1610. "
            "The telescope of Galileo Galilei showed Jupiter and its four moons. "
            "Johannes Kepler wrote to Galileo Galilei about the orbits of Jupiter."
        ),
    ),
    "music": (
        "notes/music.md",
        {"subject": "music", "lang": "en"},
        (
            "Vincenzo Galilei composed lute music in Florence. "
            "Vincenzo Galilei was the father of Galileo Galilei. "
            "The Florentine Camerata met in Florence to discuss the Greek drama."
        ),
    ),
    "food": (
        "recipes/food.md",
        {"subject": "food", "lang": "it"},
        (
            "Florence is famous for Bistecca alla Fiorentina grilled over oak. "
            "The markets of Padua sell Radicchio from Treviso every winter. "
            "Cooks in Padua and Florence prize Tuscan olive oil."
        ),
    ),
}
QUESTION = "What did Galileo Galilei see in Florence and Padua?"
KEYWORDS = {
    "ll_keywords": ["Galileo Galilei", "Florence", "Padua"],
    "hl_keywords": ["father lute music", "moons telescope orbits", "markets olive oil"],
}
MODES = ["local", "global", "hybrid", "mix", "naive", "ppr"]


def settings(workdir: Any, extractor: str = "llm") -> Settings:
    chat = "fake" if extractor == "llm" else "none"
    return fake_settings(
        workdir, llm_provider=chat, extractor=extractor, chunk_size=40, chunk_overlap=5
    )


async def index_docs(rag: KGRag, docs: dict[str, tuple[str, dict, str]] = DOCS) -> dict[str, str]:
    """Insert ``docs`` one call each (metadata is per call); source id -> document id."""
    for source, (path, meta, text) in docs.items():
        await rag.insert([text], [path], ids=[source], metadata=meta)
    return {source: source_doc_id(source) for source in docs}


async def owners(rag: KGRag, chunk_ids: list[str]) -> dict[str, set[str]]:
    """chunk id -> the documents containing it (``text_chunks`` ``doc_ids``)."""
    rows = await rag.storage.kv("text_chunks").get_many(chunk_ids)
    return {
        c: set(r.get("doc_ids") or [r["doc_id"]])
        for c, r in zip(chunk_ids, rows, strict=False)
        if r is not None
    }


async def support(rag: KGRag, keys: list[Any]) -> dict[Any, list[str]]:
    """entity name / relation pair -> its supporting chunks (``graph_support``)."""
    rows = await rag.storage.kv("graph_support").get_many([support_key(k) for k in keys])
    return {k: list(r["chunks"]) if r else [] for k, r in zip(keys, rows, strict=False)}


async def documents_behind(rag: KGRag, data: dict[str, Any]) -> dict[str, dict[Any, set[str]]]:
    """Per retrieved chunk, entity and relation: the documents it comes from."""
    chunk_ids = [c["chunk_id"] for c in data["chunks"]]
    names = [e["entity_name"] for e in data["entities"]]
    pairs = [edge_key(r["src_id"], r["tgt_id"]) for r in data["relations"]]
    held = await support(rag, [*names, *pairs])
    every = sorted({c for cs in held.values() for c in cs} | set(chunk_ids))
    docs_of = await owners(rag, every)

    def docs(chunks: list[str]) -> set[str]:
        return {d for c in chunks for d in docs_of.get(c, ())}

    return {
        "chunks": {c: docs_of.get(c, set()) for c in chunk_ids},
        "entities": {n: docs(held[n]) for n in names},
        "relations": {p: docs(held[p]) for p in pairs},
    }


def items(data: dict[str, Any]) -> dict[str, list[Any]]:
    """What a query retrieved, comparable across runs."""
    return {
        "entities": [e["entity_name"] for e in data["entities"]],
        "relations": [(r["src_id"], r["tgt_id"]) for r in data["relations"]],
        "chunks": [c["chunk_id"] for c in data["chunks"]],
        "context_chars": data["context_chars"],
    }
