"""The graph personalised PageRank walks over: entities and chunks as one node set.

Nodes ``0 .. E-1`` are the graph's entities, ``E .. E+C-1`` the chunks of
``text_chunks``. Edges are undirected:

- entity - entity: the graph's edges, weighted ``log(1 + weight)`` (a
  relation stated many times counts more, but not linearly);
- entity - chunk: from each node's ``source_ids``, weight ``chunk_edge``.

The transition matrix is kept as CSR arrays built here (row ``v`` lists
the nodes ``u`` that lead to ``v`` and ``P[u, v]``), so one power-iteration
step is a gather, a multiply and a segment sum: O(edges), no SciPy.

A built graph is cached per storage object and rebuilt when the graph
version (bumped by every commit) or the number of nodes, edges or chunks
changes (see :func:`cached_graph`). Building reads
every node once, in batches, keeping only its ``source_ids``.
"""

from __future__ import annotations

import asyncio
import re
import weakref
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import TYPE_CHECKING

import numpy as np

from kgrag.ingest.ids import entity_vector_id
from kgrag.query.records import as_list

if TYPE_CHECKING:
    from kgrag.storage.base import GraphStore, Storage

# Nodes read per batch when building.
BATCH = 5000
# Stored weight of an edge between two forms of one name (see _alias_edges).
ALIAS_WEIGHT = 3.0
# Literal name matching: longest name in words (Latin) / characters (CJK).
MAX_NAME_WORDS = 8
MAX_CJK_CHARS = 12
_WORD = re.compile(r"\w+")
# A trailing qualifier a question leaves out: "The Prestige (film)" is matched as "The Prestige" too.
_QUALIFIER = re.compile(r"\s*[(（][^()（）]*[)）]\s*$")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_COMMON = frozenset(
    "the a an of and in on at to for by with is was he she it his her they this that "
    "first second one two new old may will can".split()
)


def name_key(name: str) -> str:
    """A name as matched against questions: lower case, word characters joined by spaces."""
    return " ".join(_WORD.findall(name.casefold()))


def question_keys(question: str) -> set[str]:
    """Every word n-gram (and CJK character n-gram) of ``question``, as :func:`name_key` forms."""
    words = _WORD.findall(question.casefold())
    keys = {
        " ".join(words[i:j])
        for i in range(len(words))
        for j in range(i + 1, min(i + MAX_NAME_WORDS, len(words)) + 1)
    }
    for word in words:
        if _CJK.search(word):
            keys.update(
                word[i:j]
                for i in range(len(word))
                for j in range(i + 2, min(i + MAX_CJK_CHARS, len(word)) + 1)
            )
    return keys


def _matchable(key: str) -> bool:
    """Whether a name is specific enough to seed from a literal mention."""
    if _CJK.search(key):
        return len(key) >= 2
    return len(key) >= 3 and not all(w in _COMMON or w.isdigit() for w in key.split())


@dataclass(frozen=True, slots=True)
class EdgeWeights:
    """How the walk leaves a node.

    Entity -> chunk edges weigh ``chunk_edge``; chunk -> entity edges too,
    times ``leaf`` for an entity found in that one chunk only (it leads
    nowhere new) and, with ``idf``, times ``log(1 + chunks / its chunks)``
    (a name in every chunk leads nowhere in particular).

    Entity -> chunk edges are further multiplied by ``exp(aboutness * cos)``,
    ``cos`` the similarity of the entity's vector and the chunk's: from an
    entity the walk goes mostly to the chunks *about* it (its own article)
    rather than to every chunk that mentions it in passing.
    """

    chunk_edge: float = 1.0
    leaf: float = 1.0
    idf: bool = False
    aboutness: float = 0.0


@dataclass(frozen=True, slots=True)
class Transition:
    """CSR (by destination) of the transition matrix: row ``v`` lists ``u`` and ``P[u, v]``."""

    indptr: np.ndarray  # int64 (N + 1,)
    indices: np.ndarray  # int64: source node of each incoming edge
    data: np.ndarray  # float64: transition probability of that edge
    dangling: np.ndarray  # bool (N,): nodes no edge leaves


@dataclass
class PPRGraph:
    """Entities and chunks, their edges, and the transition matrices built from them."""

    entities: list[str]
    chunks: list[str]
    ee_pairs: np.ndarray  # int64 (M, 2): entity - entity edges
    ee_weights: np.ndarray  # float64 (M,): their stored weights
    ec_pairs: np.ndarray  # int64 (L, 2): (entity, chunk node) pairs
    ec_sim: (
        np.ndarray
    )  # float64 (L,): cosine of the entity's and the chunk's vectors (0 if either is missing)
    signature: tuple[int, ...]
    names: dict[str, list[int]] = field(default_factory=dict)
    entity_index: dict[str, int] = field(default_factory=dict)
    chunk_index: dict[str, int] = field(default_factory=dict)
    entity_chunks: np.ndarray = field(
        init=False
    )  # int64 (E,): chunks each entity was extracted from
    _degrees: np.ndarray = field(init=False)
    _transitions: dict[EdgeWeights, Transition] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.entity_chunks = np.bincount(self.ec_pairs[:, 0], minlength=len(self.entities))
        self._degrees = np.bincount(self.ee_pairs.ravel(), minlength=len(self.entities))

    @property
    def size(self) -> int:
        return len(self.entities) + len(self.chunks)

    def degree(self, entity: int) -> int:
        """Entity - entity degree of entity ``entity``."""
        return int(self._degrees[entity])

    def match_names(self, question: str) -> list[int]:
        """Entities whose name appears literally in ``question`` (longest names first)."""
        found = [k for k in question_keys(question) if k in self.names and _matchable(k)]
        found.sort(key=lambda k: (-len(k), k))
        return list(dict.fromkeys(i for k in found for i in self.names[k]))

    def transition(self, weights: EdgeWeights) -> Transition:
        """The transition matrix under ``weights`` (built once per weights)."""
        if weights not in self._transitions:
            ee, ec, n_e = self.ee_pairs, self.ec_pairs, len(self.entities)
            n_c = self.entity_chunks[ec[:, 0]]
            back = np.where(n_c > 1, 1.0, weights.leaf)
            if weights.idf:
                back = back * np.log1p(max(len(self.chunks), 1) / np.maximum(n_c, 1))
            src = np.concatenate([ee[:, 0], ee[:, 1], ec[:, 0], ec[:, 1]])
            dst = np.concatenate([ee[:, 1], ee[:, 0], ec[:, 1], ec[:, 0]])
            w_ee = np.log1p(self.ee_weights)
            out = weights.chunk_edge * np.exp(weights.aboutness * self.ec_sim)
            w = np.concatenate([w_ee, w_ee, out, weights.chunk_edge * back])
            self._transitions[weights] = _csr(n_e + len(self.chunks), src, dst, w)
        return self._transitions[weights]

    def walk(
        self,
        seeds: np.ndarray,
        damping: float,
        weights: EdgeWeights = EdgeWeights(),
        tol: float = 1e-5,
        max_iter: int = 60,
    ) -> np.ndarray:
        """Personalised PageRank from the ``seeds`` distribution, by power iteration.

        Mass on dangling nodes returns to the seeds. The result sums to 1.
        """
        t = self.transition(weights)
        s = seeds / seeds.sum()
        p = s.copy()
        for _ in range(max_iter):
            nxt = (1.0 - damping) * s + damping * (_spread(t, p) + p[t.dangling].sum() * s)
            done = np.abs(nxt - p).sum() < tol
            p = nxt
            if done:
                break
        return p


def _spread(t: Transition, p: np.ndarray) -> np.ndarray:
    """One step of the walk, ``P^T p``, as a CSR row-segment sum."""
    if not len(t.data):
        return np.zeros(len(p))
    prod = t.data * p[t.indices]
    starts = np.minimum(t.indptr[:-1], len(prod) - 1)
    return np.where(t.indptr[1:] > t.indptr[:-1], np.add.reduceat(prod, starts), 0.0)


def _csr(n: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray) -> Transition:
    """The row-normalised transition of the directed, weighted edges ``src -> dst``."""
    keep = weight > 0
    src, dst, weight = src[keep], dst[keep], weight[keep]
    out = np.bincount(src, weights=weight, minlength=n)
    prob = weight / out[src]
    order = np.argsort(dst, kind="stable")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=n), out=indptr[1:])
    return Transition(indptr, src[order].astype(np.int64), prob[order], out == 0)


async def _entity_sources(graph: GraphStore, names: list[str]) -> list[list[str]]:
    """The ``source_ids`` of every node, read in batches."""
    out: list[list[str]] = []
    for i in range(0, len(names), BATCH):
        part = names[i : i + BATCH]
        nodes = await graph.get_nodes(part)
        out.extend(as_list((nodes.get(n) or {}).get("source_ids")) for n in part)
    return out


def _entity_edges(
    rows: list[tuple[str, str, float]], index: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """(pairs of entity indexes, weights) of the graph's edges; self-loops and dangling ends dropped."""
    if not rows:
        return np.zeros((0, 2), np.int64), np.zeros(0)
    a_names, b_names, weights = zip(*rows, strict=False)
    a = np.fromiter(map(index.get, a_names, repeat(-1)), np.int64, len(rows))
    b = np.fromiter(map(index.get, b_names, repeat(-1)), np.int64, len(rows))
    w = np.array([x if x is not None else 1.0 for x in weights], dtype=np.float64)
    keep = (a >= 0) & (b >= 0) & (a != b)
    return np.stack([a[keep], b[keep]], axis=1), np.maximum(w[keep], 0.0)


async def signature(storage: Storage) -> tuple[int, int, int, int]:
    """(graph version, nodes, edges, chunks): a change in any invalidates the cache.

    The graph version is bumped by every commit that changes the graph, so
    an edit that keeps the counts (a superseded document) rebuilds too.
    """
    g = storage.graph
    counts = await asyncio.gather(
        storage.get_meta("graph_version"),
        g.node_count(),
        g.edge_count(),
        storage.kv("text_chunks").count(),
    )
    version, nodes, edges, chunks = (int(c or 0) for c in counts)
    return version, nodes, edges, chunks


async def build_graph(storage: Storage) -> PPRGraph:
    """Read the whole graph and chunk list from ``storage`` into a :class:`PPRGraph`."""
    sig = await signature(storage)
    entities = list(await storage.graph.all_node_names())
    chunks = list(await storage.kv("text_chunks").keys())
    e_index = {n: i for i, n in enumerate(entities)}
    c_index = {c: len(entities) + j for j, c in enumerate(chunks)}
    sources = await _entity_sources(storage.graph, entities)
    ec_src = np.repeat(np.arange(len(entities)), [len(ids) for ids in sources])
    ec_dst = np.fromiter(
        map(c_index.get, chain.from_iterable(sources), repeat(-1)), np.int64, len(ec_src)
    )
    n = len(entities) + len(chunks)
    keys = np.unique(ec_src[ec_dst >= 0] * n + ec_dst[ec_dst >= 0])
    ee, ee_w = _entity_edges(await storage.graph.all_edges(), e_index)
    names: dict[str, list[int]] = {}
    for i, name in enumerate(entities):
        for key in {name_key(name), name_key(_QUALIFIER.sub("", name))}:
            names.setdefault(key, []).append(i)
    alias = _alias_edges(names)
    ee, ee_w = (
        np.concatenate([ee, alias]),
        np.concatenate([ee_w, np.full(len(alias), ALIAS_WEIGHT)]),
    )
    ec = np.stack([keys // n, keys % n], axis=1)
    sim = await _pair_similarity(storage, entities, chunks, ec)
    return PPRGraph(entities, chunks, ee, ee_w, ec, sim, sig, names, e_index, c_index)


def _alias_edges(names: dict[str, list[int]]) -> np.ndarray:
    """Edges joining entities that share a name once a trailing qualifier is dropped.

    "Big Hero 6 (film)" (an article's title) and "Big Hero 6" (as other
    chunks mention it) are one thing as far as the walk is concerned.
    """
    pairs = [(group[0], other) for group in names.values() if len(group) > 1 for other in group[1:]]
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)


async def _pair_similarity(
    storage: Storage, entities: list[str], chunks: list[str], ec: np.ndarray
) -> np.ndarray:
    """Cosine of each (entity, chunk) pair's stored vectors; 0 where either vector is missing."""
    sim = np.zeros(len(ec))
    if not len(ec):
        return sim
    chunk_vecs = await storage.vectors("chunks").get_vectors(chunks)
    dim = len(next(iter(chunk_vecs.values()))) if chunk_vecs else 0
    if not dim:
        return sim
    c_mat = np.zeros((len(chunks), dim), np.float32)
    for j, c in enumerate(chunks):
        if c in chunk_vecs and len(chunk_vecs[c]) == dim:
            c_mat[j] = chunk_vecs[c]
    del chunk_vecs
    store, n_e = storage.vectors("entities"), len(entities)
    bounds = np.searchsorted(ec[:, 0], np.arange(0, n_e + BATCH, BATCH))  # ec is sorted by entity
    for b, lo in enumerate(range(0, n_e, BATCH)):
        part = entities[lo : lo + BATCH]
        got = await store.get_vectors([entity_vector_id(n) for n in part])
        e_mat = np.zeros((len(part), dim), np.float32)
        for k, name in enumerate(part):
            v = got.get(entity_vector_id(name))
            if v is not None and len(v) == dim:
                e_mat[k] = v
        pairs = ec[bounds[b] : bounds[b + 1]]
        sim[bounds[b] : bounds[b + 1]] = np.einsum(
            "ij,ij->i", e_mat[pairs[:, 0] - lo], c_mat[pairs[:, 1] - n_e]
        )
    return sim


@dataclass(slots=True)
class _Slot:
    """One storage's cached graph, and the lock that makes one task build it."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    graph: PPRGraph | None = None


_CACHE: weakref.WeakKeyDictionary[Storage, _Slot] = weakref.WeakKeyDictionary()


async def cached_graph(storage: Storage) -> tuple[PPRGraph, bool]:
    """The :class:`PPRGraph` of ``storage`` (built once; rebuilt when its counts change).

    Returns the graph and whether it was (re)built by this call.
    """
    try:
        slot = _CACHE.setdefault(storage, _Slot())
    except TypeError:  # a storage object that cannot be weakly referenced: no cache
        return await build_graph(storage), True
    async with slot.lock:
        graph = slot.graph
        if graph is not None and graph.signature == await signature(storage):
            return graph, False
        slot.graph = graph = await build_graph(storage)
        return graph, True
