"""Integrity check: do the graph, vectors, chunks, lexical index and records agree?

The primary records are the documents (``doc_status``, ``doc_graph``),
the live chunks' facts (``chunk_facts``) and the curation records
(:mod:`kgrag.knowledge.curation`: aliases, merges, manual edits); everything
else is derived. The graph's keys are the chunks' names mapped through the
aliases, plus manual creations, minus tombstones.
:func:`check` reports every orphan, dangling reference and count
mismatch, and how the stored walk graph (:mod:`kgrag.knowledge.walk.store`)
differs from one built afresh; :func:`repair` rebuilds the derived search
stores (vectors, lexical index, walk graph) from the primary data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kgrag.indexing.curated import manual_facts, tombstoned_edge
from kgrag.indexing.facts import StoredChunk
from kgrag.ingest.ids import entity_vector_id, relation_vector_id
from kgrag.knowledge.curation import Curation
from kgrag.knowledge.curation import load as load_curation
from kgrag.knowledge.walk import store as walk_store
from kgrag.storage.layout import (
    CHUNK_VECTORS,
    CHUNKS,
    DOC_GRAPH,
    ENTITY_VECTORS,
    FACTS,
    RELATION_VECTORS,
    SUPPORT,
    parse_support_key,
    support_key,
)
from kgrag.types import DocRecord, DocStatus

if TYPE_CHECKING:
    from kgrag.storage.base import Storage


@dataclass
class CheckReport:
    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


async def _kv_all(storage: Storage, ns: str) -> dict[str, dict[str, object]]:
    kv = storage.kv(ns)
    keys = sorted(await kv.keys())
    return {k: v for k, v in zip(keys, await kv.get_many(keys), strict=False) if v is not None}


@dataclass
class _State:
    records: dict[str, DocRecord]
    doc_graph: dict[str, dict[str, Any]]
    facts: dict[str, StoredChunk]
    chunks: dict[str, dict[str, Any]]
    support: dict[str, dict[str, Any]]
    nodes: dict[str, dict[str, Any]]
    edges: dict[tuple[str, str], dict[str, Any]]
    curation: Curation


async def _load(storage: Storage) -> _State:
    g = storage.graph
    names = await g.all_node_names()
    pairs = [(a, b) for a, b, _ in await g.all_edges()]
    facts = await _kv_all(storage, FACTS)
    return _State(
        {r.id: r for r in await storage.doc_status.by_status(*DocStatus)},
        await _kv_all(storage, DOC_GRAPH),
        {c: StoredChunk.from_record(c, rec) for c, rec in facts.items()},
        await _kv_all(storage, CHUNKS),
        await _kv_all(storage, SUPPORT),
        await g.get_nodes(names),
        await g.get_edges(pairs),
        await load_curation(storage),
    )


def _documents(st: _State, out: list[str]) -> None:
    for doc, rec in st.records.items():
        if rec.status == DocStatus.PROCESSED and doc not in st.doc_graph:
            out.append(f"document {doc} is processed but has no contribution record")
    for doc, contrib in st.doc_graph.items():
        if doc not in st.records:
            out.append(f"contribution record of {doc} has no document record")
        for cid in contrib.get("chunks", []):
            if cid not in st.facts or doc not in st.facts[cid].owners:
                out.append(f"document {doc} lists chunk {cid}, which does not list it as owner")


def _chunks(st: _State, out: list[str]) -> None:
    for cid, chunk in st.facts.items():
        if not chunk.owners:
            out.append(f"chunk {cid} has no owner")
        for doc in chunk.owners:
            if cid not in st.doc_graph.get(doc, {}).get("chunks", []):
                out.append(f"chunk {cid} names owner {doc}, whose contribution lacks it")
        if cid not in st.chunks:
            out.append(f"chunk {cid} has facts but no text")
        elif sorted(chunk.owners) != st.chunks[cid].get("doc_ids"):
            out.append(f"chunk {cid}: text record owners differ from its facts")
    for cid in st.chunks.keys() - st.facts.keys():
        out.append(f"chunk {cid} has text but no facts (orphan)")


def _expected_support(st: _State) -> dict[str, list[str]]:
    want: dict[str, set[str]] = {}
    for cid, chunk in st.facts.items():
        if chunk.owners:
            facts = chunk.facts()
            keys: list[str | tuple[str, str]] = [*facts.entity_names(), *facts.edge_keys()]
            for key in keys:
                want.setdefault(support_key(key), set()).add(cid)
    return {k: sorted(v) for k, v in want.items()}


def _expected_graph(st: _State) -> dict[str, set[str]]:
    """Each graph key the live chunks and the curation records give, with its sources."""
    cur = st.curation
    want: dict[str, set[str]] = {}
    chunks = [cur.rename(c.facts()) for c in st.facts.values() if c.owners]
    manual = manual_facts(cur, set(cur.curated_names()) | _canon_names(st), set(), "")
    for facts in [*chunks, *([manual] if manual else [])]:
        keys: list[str | tuple[str, str]] = [*facts.entity_names(), *facts.edge_keys()]
        for key in keys:
            if not (cur.deleted(key) or (isinstance(key, tuple) and tombstoned_edge(cur, key))):
                want.setdefault(support_key(key), set()).add(facts.chunk_id)
    return want


def _canon_names(st: _State) -> set[str]:
    return {st.curation.canon(n) for n in st.curation.curated_names()}


def _graph(st: _State, out: list[str]) -> None:
    raw = _expected_support(st)
    for key in sorted(raw.keys() | st.support.keys()):
        have = st.support.get(key, {}).get("chunks")
        if have != raw.get(key):
            out.append(f"support of {key[2:]!r} is {have}, the live chunks give {raw.get(key)}")
    want = _expected_graph(st)
    for name, node in st.nodes.items():
        if support_key(name) not in want:
            out.append(f"entity {name!r} is supported by no live chunk (orphan)")
        elif not set(node.get("source_ids", [])) <= want[support_key(name)]:
            out.append(f"entity {name!r} cites chunks that do not support it")
    for pair in st.edges:
        if support_key(pair) not in want:
            out.append(f"relation {pair} is supported by no live chunk (orphan)")
        for end in pair:
            if end not in st.nodes:
                out.append(f"relation {pair} points at missing entity {end!r}")
    for key in want:
        kind, rest = key[:2], key[2:]
        if kind == "e:" and rest not in st.nodes:
            out.append(f"entity {rest!r} is supported by live chunks but missing from the graph")


def _curation(st: _State, out: list[str]) -> None:
    """The records agree with each other and with the graph."""
    cur = st.curation
    for alias, rec in sorted(cur.aliases.items()):
        merge = cur.merges.get(rec.get("merge", ""))
        if merge is None or alias not in merge.get("sources", []):
            out.append(f"alias {alias!r} names merge {rec.get('merge')!r}, which does not list it")
        if cur.canon(alias) == alias or cur.canon(alias) in cur.aliases:
            out.append(f"alias {alias!r} is part of a cycle")
        if alias in st.nodes:
            out.append(f"entity {alias!r} is an alias of {cur.canon(alias)!r} but in the graph")
    for mid, merge in sorted(cur.merges.items()):
        for source in merge.get("sources", []):
            row = cur.aliases.get(source)
            if (row.get("merge") if row else None) != mid:
                out.append(f"merge {mid} lists {source!r}, which is not its alias")
    for key in sorted(k for k in cur.edits if cur.edits[k].get("deleted")):
        if key[2:] in st.nodes or parse_support_key(key) in st.edges:
            out.append(f"{key[2:]!r} is deleted by a manual edit but in the graph")


async def _vectors(storage: Storage, st: _State, out: list[str], counts: dict[str, int]) -> None:
    expected = {
        ENTITY_VECTORS: {entity_vector_id(n) for n in st.nodes},
        RELATION_VECTORS: {relation_vector_id(*k) for k in st.edges},
        CHUNK_VECTORS: set(st.chunks),
    }
    for ns, ids in expected.items():
        store = storage.vectors(ns)
        have = await store.get_metas(sorted(ids))
        count = await store.count()
        counts[f"{ns}_vectors"] = count
        for missing in sorted(ids - have.keys()):
            out.append(f"{ns} vector {missing} is missing")
        if count > len(have):
            out.append(f"{ns} vectors: {count - len(have)} orphan vector(s)")
    if storage.lexical is not None:
        n = await storage.lexical.count()
        counts["lexical"] = n
        if n != len(st.chunks):
            out.append(f"lexical index holds {n} entries for {len(st.chunks)} chunks")


async def check(storage: Storage) -> CheckReport:
    """Every inconsistency between the stores (empty when the index is sound)."""
    st = await _load(storage)
    report = CheckReport(
        counts={
            "documents": len(st.records),
            "chunks": len(st.chunks),
            "entities": len(st.nodes),
            "relations": len(st.edges),
        }
    )
    _documents(st, report.problems)
    _chunks(st, report.problems)
    _graph(st, report.problems)
    _curation(st, report.problems)
    await _vectors(storage, st, report.problems, report.counts)
    report.problems.extend(await walk_store.verify(storage))
    return report
