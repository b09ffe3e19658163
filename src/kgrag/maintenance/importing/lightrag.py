"""A LightRAG 1.5.x working directory read into an import plan.

Documents come from ``kv_store_doc_status.json`` (processed ones) and
``kv_store_full_docs.json``, their chunks from ``kv_store_text_chunks.json``
in LightRAG's order. kgrag keys a chunk by the md5 of its text, as its own
chunker does, so a file LightRAG chunked the way kgrag chunks it is never
extracted again when kgrag indexes it: its chunks' facts are already live.

Each chunk's facts are LightRAG's graph split back over its chunks: every
entity and relation of the GraphML (and ``kv_store_entity_chunks`` /
``kv_store_relation_chunks``, which are not capped) gets a row in each chunk
that supports it, with LightRAG's type, keywords and direction. The
description fragments (LightRAG joins them with ``<SEP>``) go to the chunk
whose cached extraction (``kv_store_llm_response_cache.json``, parsed by
kgrag's parser) produced them; fragments no cached answer explains go to the
first supporting chunk, and a summarised description is kept as the seed of
kgrag's summary. Weights are the cached ones when they add up to LightRAG's,
else LightRAG's weight spread evenly over the supporting chunks.

``root``: the folder LightRAG's file paths are relative to. A document whose
file is found there is known by that file (its source), so ``kgrag index``
of the same folder finds it unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kgrag.extract.parser import parse_extraction
from kgrag.ingest.ids import content_hash, source_doc_id
from kgrag.llm.tokenizer import Tokenizer
from kgrag.maintenance.importing.lightrag_files import (
    Graph,
    read_graphml,
    read_kv,
    read_vectors,
)
from kgrag.maintenance.importing.model import (
    ImportedChunk,
    ImportedDoc,
    ImportFormatError,
    ImportPlan,
)
from kgrag.storage.base import edge_key
from kgrag.types import SEP

Pair = tuple[str, str]
KIND = "llm"  # LightRAG's graph is an LLM's extraction


def _split(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value if v]
    return [v for v in str(value or "").split(SEP) if v]


Explained = tuple[dict[str, set[str]], dict[Pair, tuple[set[str], list[float]]]]


def _cached(cache: dict[str, Any]) -> dict[str, Explained]:
    """Per LightRAG chunk id: descriptions by entity name, and (descriptions, weights) by pair."""
    out: dict[str, Explained] = {}
    for entry in sorted(cache.values(), key=lambda e: str(e.get("_id", ""))):
        if not isinstance(entry, dict) or entry.get("cache_type") != "extract":
            continue
        cid, text = entry.get("chunk_id"), entry.get("return")
        if not isinstance(cid, str) or not isinstance(text, str):
            continue
        ents, rels = out.setdefault(cid, ({}, {}))
        found = parse_extraction(text, "delimited")
        for e in found.entities:
            ents.setdefault(e.name, set()).add(e.description.strip())
        for r in found.relations:
            descs, weights = rels.setdefault(edge_key(r.source, r.target), (set(), []))
            descs.add(r.description.strip())
            weights.append(float(r.weight))
    return out


def _assign(fragments: list[str], explains: dict[str, Any]) -> dict[str, list[str]]:
    """Fragments per supporting chunk (``explains``: its cached descriptions), else the first."""
    chunks = list(explains)
    out: dict[str, list[str]] = {c: [] for c in chunks}
    for frag in fragments:
        owner = next((c for c in chunks if frag.strip() in explains[c]), chunks[0])
        out[owner].append(frag)
    return out


class _Reader:
    """Turns the stores of one working directory into per-chunk rows."""

    def __init__(self, workdir: Path):
        self.chunks = read_kv(workdir, "text_chunks")
        self.graph: Graph = read_graphml(workdir)
        self.entity_chunks = read_kv(workdir, "entity_chunks", required=False)
        self.relation_chunks = read_kv(workdir, "relation_chunks", required=False)
        self.cache = _cached(read_kv(workdir, "llm_response_cache", required=False))
        self.rows: dict[str, ImportedChunk] = {}
        self.seeds_nodes: dict[str, dict[str, Any]] = {}
        self.seeds_edges: dict[Pair, dict[str, Any]] = {}
        self.warnings: list[str] = []

    def chunk(self, lightrag_id: str, tokenizer: Tokenizer) -> ImportedChunk | None:
        if lightrag_id not in self.rows:
            row = self.chunks.get(lightrag_id)
            if not isinstance(row, dict) or not isinstance(row.get("content"), str):
                return None
            tokens = int(row.get("tokens") or tokenizer.count(row["content"]))
            self.rows[lightrag_id] = ImportedChunk(row["content"], extractor=KIND, tokens=tokens)
        return self.rows[lightrag_id]

    def _support(self, listed: dict[str, Any], key: str, data: dict[str, str]) -> list[str]:
        rec = listed.get(key)
        ids = (
            _split(rec.get("chunk_ids")) if isinstance(rec, dict) else _split(data.get("source_id"))
        )
        known = [c for c in dict.fromkeys(ids) if c in self.rows]
        if len(known) < len(ids):
            self.warnings.append(
                f"{key!r} cites {len(ids) - len(known)} chunk(s) LightRAG no longer holds"
            )
        return known

    def entities(self) -> None:
        for name, data in sorted(self.graph.nodes.items()):
            support = self._support(self.entity_chunks, name, data)
            if not support:
                continue
            frags = _split(data.get("description"))
            explains = {c: self.cache.get(c, ({}, {}))[0].get(name, ()) for c in support}
            given = _assign(frags, explains)
            kind = data.get("entity_type") or "UNKNOWN"
            for cid, mine in given.items():
                rows = [[name, kind, f] for f in mine] or [[name, kind, ""]]
                self.rows[cid].entities.extend(rows)
            self.seeds_nodes[name] = {"description": data.get("description", "")}

    def relations(self) -> None:
        for (src, tgt), data in sorted(self.graph.edges.items()):
            key = edge_key(src, tgt)
            listed = self.relation_chunks.get(f"{key[0]}{SEP}{key[1]}") or self.relation_chunks.get(
                f"{src}{SEP}{tgt}"
            )
            support = self._support({"k": listed} if listed else {}, "k", data)
            if not support:
                continue
            cached = {c: self.cache.get(c, ({}, {}))[1].get(key, (set(), [])) for c in support}
            given = _assign(_split(data.get("description")), {c: cached[c][0] for c in support})
            weights = _weights(float(data.get("weight") or 1.0), [cached[c][1] for c in support])
            kw = data.get("keywords", "")
            for (cid, mine), weight in zip(given.items(), weights, strict=True):
                rows = [[src, tgt, kw, f, 0.0] for f in mine] or [[src, tgt, kw, "", 0.0]]
                rows[0][4] = weight
                self.rows[cid].relations.extend(rows)
            self.seeds_edges[key] = {"description": data.get("description", "")}


def _weights(total: float, cached: list[list[float]]) -> list[float]:
    """Per supporting chunk: the cached weights when they add up to LightRAG's, else an even share."""
    sums = [sum(ws) for ws in cached]
    if all(cached) and abs(sum(sums) - total) <= 1e-9 * max(1.0, abs(total)):
        return sums
    return [total / len(cached)] * len(cached)


def _identity(doc_id: str, file_path: str, text: str, root: Path | None) -> dict[str, Any]:
    """Who the document is in kgrag: its file under ``root`` when found, else LightRAG's id."""
    if root is not None and file_path:
        path = Path(os.path.realpath(root / file_path))
        if path.is_file():
            on_disk = path.read_text(encoding="utf-8", errors="replace")
            digest = content_hash(on_disk if on_disk.strip() == text else text)
            return {
                "id": source_doc_id(str(path)),
                "source": str(path),
                "file_path": str(path),
                "relative_path": file_path,
                "content_hash": digest,
            }
    return {"id": doc_id, "file_path": file_path or "unknown_source"}


def _documents(
    reader: _Reader, workdir: Path, tokenizer: Tokenizer, root: Path | None
) -> Iterable[ImportedDoc]:
    status, full = read_kv(workdir, "doc_status"), read_kv(workdir, "full_docs")
    for doc_id, rec in sorted(status.items()):
        if not isinstance(rec, dict) or rec.get("status") != "processed":
            reader.warnings.append(
                f"document {doc_id} is {rec.get('status')!r} in LightRAG: left out"
            )
            continue
        text = (full.get(doc_id) or {}).get("content")
        order = sorted(
            (c for c in rec.get("chunks_list") or [] if c in reader.chunks),
            key=lambda c: int(reader.chunks[c].get("chunk_order_index", 0)),
        )
        chunks = [made for c in order if (made := reader.chunk(c, tokenizer)) is not None]
        if not isinstance(text, str):
            text = "\n\n".join(c.content for c in chunks)
        who = _identity(doc_id, str(rec.get("file_path") or ""), text, root)
        yield ImportedDoc(chunks=chunks, content=text, metadata={"lightrag_id": doc_id}, **who)


def read_workdir(workdir: Path, tokenizer: Tokenizer, *, root: Path | None = None) -> ImportPlan:
    """The plan of everything LightRAG holds in ``workdir``."""
    if not workdir.is_dir():
        raise ImportFormatError(f"{workdir}: not a folder (give a LightRAG working directory)")
    reader = _Reader(workdir)
    docs = list(_documents(reader, workdir, tokenizer, root))
    reader.entities()
    reader.relations()
    plan = ImportPlan("lightrag", docs, reader.seeds_nodes, reader.seeds_edges)
    for namespace in ("chunks", "entities", "relationships"):
        plan.text_vectors.update(read_vectors(workdir, namespace))
    plan.warnings = reader.warnings
    return plan
