"""The hand-built graph of the ppr tests: an answer chunk only the graph reaches.

The question names "Optica Nova"; the chunk saying where its publisher
sits ("Lumen Institute ... Lyon") shares no word with the question, so
dense and BM25 search cannot find it: only the walk Optica Nova ->
Lumen Institute -> that chunk can. The ``ppr_engine`` fixture
(``conftest.py``) serves it from a real in-memory SQLite store.
"""

from __future__ import annotations

import hashlib

from kgrag.ingest.ids import entity_vector_id
from kgrag.storage.base import edge_key

QUESTION = "Where is the publisher of Optica Nova based?"
CHUNKS = {
    "journal": "Optica Nova is a journal published by the Lumen Institute.",
    "answer": "Lumen Institute has its headquarters in Lyon since 1921.",
    "post": "The publisher of the Daily Post is based in Leeds.",
    "lenses": "Where is the best shop for optica lenses? Opticians are based downtown.",
    "nova": "Nova Scotia is where the publisher Harbour Press is based.",
    "cafe": "The cafeteria serves soup on Fridays.",
}
ENTITIES = {  # name -> chunk keys
    "Optica Nova": ["journal"],
    "Lumen Institute": ["journal", "answer"],
    "Lyon": ["answer"],
    "Daily Post": ["post"],
    "Leeds": ["post"],
    "Nova Scotia": ["nova"],
    "Harbour Press": ["nova"],
}
RELATIONS = {
    ("Optica Nova", "Lumen Institute"): ["journal"],
    ("Lumen Institute", "Lyon"): ["answer"],
    ("Daily Post", "Leeds"): ["post"],
    ("Harbour Press", "Nova Scotia"): ["nova"],
}


def cid(key: str) -> str:
    return "chunk-" + hashlib.md5(CHUNKS[key].encode()).hexdigest()


KEY_OF = {cid(k): k for k in CHUNKS}


async def write_corpus(storage, embed, entities=ENTITIES, relations=RELATIONS) -> None:
    rows = {
        cid(k): {
            "content": t,
            "tokens": len(t.split()),
            "doc_id": "doc-" + k,
            "order": 0,
            "file_path": k,
        }
        for k, t in CHUNKS.items()
    }
    await storage.kv("text_chunks").upsert(rows)
    ids = list(rows)
    await storage.vectors("chunks").upsert(
        ids,
        await embed.embed([rows[i]["content"] for i in ids]),
        [{"doc_id": rows[i]["doc_id"], "file_path": rows[i]["file_path"]} for i in ids],
    )
    await storage.lexical.add({i: rows[i]["content"] for i in ids})
    nodes = {
        n: {
            "entity_type": "Thing",
            "description": " ".join(CHUNKS[k] for k in keys),
            "source_ids": [cid(k) for k in keys],
            "extractor": "nlp",
        }
        for n, keys in entities.items()
    }
    await storage.graph.upsert_nodes(nodes)
    names = list(nodes)
    await storage.vectors("entities").upsert(
        [entity_vector_id(n) for n in names],
        await embed.embed([f"{n}\n{nodes[n]['description']}" for n in names]),
        [{"name": n} for n in names],
    )
    edges = {
        edge_key(a, b): {
            "weight": 1.0,
            "keywords": "related",
            "description": " ".join(CHUNKS[k] for k in keys),
            "source_ids": [cid(k) for k in keys],
        }
        for (a, b), keys in relations.items()
    }
    await storage.graph.upsert_edges(edges)


def keys(data) -> list[str]:
    return [KEY_OF[c["chunk_id"]] for c in data["chunks"]]
