"""Dump an index to plain data, for comparing two indexes in tests."""

from __future__ import annotations

import asyncio
from pathlib import Path

VOLATILE = {"created_at", "updated_at"}


def _clean(d: dict) -> dict:
    return {k: v for k, v in d.items() if k not in VOLATILE}


async def _dump(workdir: Path) -> dict:
    from kgrag.storage.registry import open_storage

    storage = open_storage("sqlite", workdir)
    await storage.open()
    try:
        g = storage.graph
        names = sorted(await g.all_node_names())
        nodes = await g.get_nodes(names)
        pairs = sorted((a, b) for a, b, _w in await g.all_edges())
        edges = await g.get_edges(pairs)
        statuses = await storage.doc_status.counts()
        return {
            "nodes": {n: _clean(nodes[n]) for n in names},
            "edges": {f"{a}|{b}": _clean(edges[(a, b)]) for a, b in pairs},
            "chunks": sorted(await storage.kv("text_chunks").keys()),
            "vectors": {
                ns: await storage.vectors(ns).count() for ns in ("entities", "relations", "chunks")
            },
            "statuses": {k: v for k, v in statuses.items() if v},
        }
    finally:
        await storage.close()


def dump_index(workdir: Path) -> dict:
    return asyncio.run(_dump(workdir))
