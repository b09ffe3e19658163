"""The hand-built graph of the path tests: a 3-hop chain among distractor branches.

The question names "Mira Solen" and "Quill Prize"; only the chain

    Mira Solen -studied under-> Ovid Tark -founded-> Harrow Guild -awards-> Quill Prize

joins them within three hops, apart from the 2-hop detour through the hub
"Writers", which is linked to 60 filler names as well (so the resource
reaching it is split 62 ways). Every relation has its own one-sentence
chunk and document, so a chunk names the edge it supports.
"""

from __future__ import annotations

import hashlib

from kgrag.ingest.ids import entity_vector_id, relation_vector_id
from kgrag.storage.base import edge_key

QUESTION = "How is Mira Solen connected to the Quill Prize?"
CHAIN = ["Mira Solen", "Ovid Tark", "Harrow Guild", "Quill Prize"]
# (source, keywords, target): the stored direction of each relation.
RELATIONS = [
    ("Mira Solen", "studied under", "Ovid Tark"),
    ("Ovid Tark", "founded", "Harrow Guild"),
    ("Harrow Guild", "awards", "Quill Prize"),
    ("Mira Solen", "lives in", "Port Aven"),
    ("Port Aven", "has", "Aven Library"),
    ("Aven Library", "holds", "Old Maps"),
    ("Ovid Tark", "born in", "Kessel"),
    ("Kessel", "lies on", "Kessel River"),
    ("Bright Ink", "sponsors", "Quill Prize"),
    ("Bright Ink", "based in", "Dorn"),
    ("Mira Solen", "member of", "Writers"),
    ("Quill Prize", "honours", "Writers"),
] + [("Writers", "includes", f"Filler Name {i}") for i in range(60)]
CHAIN_EDGES = RELATIONS[:3]


def sentence(src: str, keywords: str, tgt: str) -> str:
    return f"{src} {keywords} {tgt}."


def cid(rel: tuple[str, str, str]) -> str:
    return "chunk-" + hashlib.md5(sentence(*rel).encode()).hexdigest()


def doc_of(rel: tuple[str, str, str]) -> str:
    return "doc-" + cid(rel)[6:18]


async def write_corpus(storage, embed, relations=RELATIONS) -> None:
    """Chunks, nodes, edges and their vectors of ``relations``, into ``storage``."""
    rows = {
        cid(r): {
            "content": sentence(*r),
            "tokens": len(sentence(*r).split()),
            "doc_id": doc_of(r),
            "order": 0,
            "file_path": f"{r[0]} {r[1]}.txt",
        }
        for r in relations
    }
    ids = list(rows)
    await storage.kv("text_chunks").upsert(rows)
    await storage.vectors("chunks").upsert(
        ids,
        await embed.embed([rows[i]["content"] for i in ids]),
        [{"doc_id": rows[i]["doc_id"], "file_path": rows[i]["file_path"]} for i in ids],
    )
    await storage.lexical.add({i: rows[i]["content"] for i in ids})
    sources: dict[str, list[str]] = {}
    for r in relations:
        for name in (r[0], r[2]):
            sources.setdefault(name, []).append(cid(r))
    nodes = {
        n: {"entity_type": "Thing", "description": f"{n}.", "source_ids": s}
        for n, s in sources.items()
    }
    await storage.graph.upsert_nodes(nodes)
    await storage.vectors("entities").upsert(
        [entity_vector_id(n) for n in nodes],
        await embed.embed(list(nodes)),
        [{"name": n} for n in nodes],
    )
    await _write_edges(storage, embed, relations)


async def _write_edges(storage, embed, relations) -> None:
    edges = {
        edge_key(a, b): {
            "weight": 1.0,
            "keywords": kw,
            "description": sentence(a, kw, b),
            "directions": [[a, b]],
            "source_ids": [cid((a, kw, b))],
        }
        for a, kw, b in relations
    }
    await storage.graph.upsert_edges(edges)
    pairs = list(edges)
    await storage.vectors("relations").upsert(
        [relation_vector_id(a, b) for a, b in pairs],
        await embed.embed([f"{a} {edges[(a, b)]['keywords']} {b}" for a, b in pairs]),
        [{"src": a, "tgt": b} for a, b in pairs],
    )
