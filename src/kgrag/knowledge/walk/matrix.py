"""The graph personalised PageRank walks over: entities and chunks as one node set.

Nodes ``0 .. E-1`` are the entities of the stored walk graph
(:class:`~kgrag.knowledge.walk.graph.WalkGraph`), ``E .. E+C-1`` its chunks. Edges
are undirected:

- entity - entity: the graph's edges, weighted ``log(1 + weight)`` (a
  relation stated many times counts more, but not linearly), and edges
  of weight ``ALIAS_WEIGHT`` joining names that differ only by a
  trailing qualifier ("Big Hero 6 (film)" and "Big Hero 6");
- entity - chunk: from each node's ``source_ids``, weighted by
  :class:`EdgeWeights`.

The transition matrix is kept as CSR arrays by source (the edges leaving
node ``u`` are ``indptr[u]:indptr[u+1]``, with their ``P[u, v]``), which is
what both walks of :mod:`~kgrag.knowledge.walk.pagerank` read: the exact
power iteration and the forward push.

The graph is cached per storage object and follows the store's commits
through :class:`~kgrag.knowledge.walk.store.WalkReader`: a new process
decodes the stored snapshot, a commit patches only the rows it touched.
"""

from __future__ import annotations

import asyncio
import re
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kgrag.knowledge.walk import pagerank
from kgrag.knowledge.walk.graph import WalkGraph, name_key
from kgrag.knowledge.walk.store import WalkReader

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

__all__ = ["EdgeWeights", "PPRGraph", "Transition", "cached_graph", "name_key", "question_keys"]

# Stored weight of an edge between two forms of one name.
ALIAS_WEIGHT = 3.0
# Literal name matching: longest name in words (Latin) / characters (CJK).
MAX_NAME_WORDS = 8
MAX_CJK_CHARS = 12
_WORD = re.compile(r"\w+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_COMMON = frozenset(
    "the a an of and in on at to for by with is was he she it his her they this that "
    "first second one two new old may will can".split()
)


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
    """CSR (by source) of the transition matrix: edges ``indptr[u]:indptr[u+1]`` leave ``u``."""

    indptr: np.ndarray  # int64 (N + 1,)
    src: np.ndarray  # int64: source of each edge (non-decreasing)
    dst: np.ndarray  # int64: its destination
    prob: np.ndarray  # float64: its transition probability
    dangling: np.ndarray  # bool (N,): nodes no edge leaves


@dataclass
class PPRGraph:
    """Entities and chunks, their edges, and the transition matrices built from them."""

    entities: list[str]
    chunks: list[str]
    ee_pairs: np.ndarray  # int64 (M, 2): entity - entity edges (stored and alias)
    ee_weights: np.ndarray  # float64 (M,): their weights
    ec_pairs: np.ndarray  # int64 (L, 2): (entity, chunk node) pairs
    ec_sim: (
        np.ndarray
    )  # (L,): cosine of the entity's and the chunk's vectors (0 if either is missing)
    names: dict[str, int] = field(default_factory=dict)  # name key -> its first entity
    shared: dict[str, list[int]] = field(default_factory=dict)  # keys of several entities
    entity_index: dict[str, int] = field(default_factory=dict)
    chunk_index: dict[str, int] = field(default_factory=dict)
    entity_chunks: np.ndarray = field(init=False)  # int64 (E,): chunks each entity cites
    _degrees: np.ndarray = field(init=False)
    _transitions: dict[EdgeWeights, Transition] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.entity_chunks = np.bincount(self.ec_pairs[:, 0], minlength=len(self.entities))
        self._degrees = np.bincount(self.ee_pairs.ravel(), minlength=len(self.entities))

    @classmethod
    def from_walk(cls, walk: WalkGraph) -> PPRGraph:
        """The walk graph's nodes and edges, with the alias edges its name keys give."""
        n_e = len(walk.entities)
        names, shared, alias = _name_groups(walk)
        return cls(
            walk.entities,
            walk.chunks,
            np.concatenate([walk.ee, alias]),
            np.concatenate([walk.weight, np.full(len(alias), ALIAS_WEIGHT)]),
            walk.ec + np.array([0, n_e], dtype=np.int64),
            walk.sim.astype(np.float64),
            names,
            shared,
            dict(zip(walk.entities, range(n_e), strict=True)),
            dict(zip(walk.chunks, range(n_e, n_e + len(walk.chunks)), strict=True)),
        )

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
        return list(dict.fromkeys(i for k in found for i in self.shared.get(k, [self.names[k]])))

    def transition(self, weights: EdgeWeights) -> Transition:
        """The transition matrix under ``weights`` (built once per weights)."""
        if weights not in self._transitions:
            ee, ec = self.ee_pairs, self.ec_pairs
            n_c = self.entity_chunks[ec[:, 0]]
            back = np.where(n_c > 1, 1.0, weights.leaf)
            if weights.idf:
                back = back * np.log1p(max(len(self.chunks), 1) / np.maximum(n_c, 1))
            src = np.concatenate([ee[:, 0], ee[:, 1], ec[:, 0], ec[:, 1]])
            dst = np.concatenate([ee[:, 1], ee[:, 0], ec[:, 1], ec[:, 0]])
            w_ee = np.log1p(self.ee_weights)
            out = weights.chunk_edge * np.exp(weights.aboutness * self.ec_sim)
            w = np.concatenate([w_ee, w_ee, out, weights.chunk_edge * back])
            self._transitions[weights] = _csr(self.size, src, dst, w)
        return self._transitions[weights]

    def walk(
        self,
        seeds: np.ndarray,
        damping: float,
        weights: EdgeWeights = EdgeWeights(),
        tol: float = 1e-5,
        max_iter: int = 60,
    ) -> np.ndarray:
        """Personalised PageRank from ``seeds`` by power iteration (see :func:`pagerank.power`)."""
        return pagerank.power(self.transition(weights), seeds, damping, tol, max_iter)

    def push(
        self, seeds: np.ndarray, damping: float, weights: EdgeWeights, eps: float
    ) -> np.ndarray:
        """Personalised PageRank from ``seeds`` by forward push (see :func:`pagerank.push`)."""
        return pagerank.push(self.transition(weights), seeds, damping, eps)


def _csr(n: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray) -> Transition:
    """The row-normalised transition of the directed, weighted edges ``src -> dst``."""
    keep = weight > 0
    if not keep.all():
        src, dst, weight = src[keep], dst[keep], weight[keep]
    out = np.bincount(src, weights=weight, minlength=n)
    order = _stable_order(src)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    src, dst = src[order], dst[order]
    return Transition(indptr, src, dst, weight[order] / out[src], out == 0)


def _stable_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` (non-negative keys), by 16-bit radix passes."""
    top = int(keys.max()) if len(keys) else 0
    if top >= 1 << 32:
        return np.argsort(keys, kind="stable")
    order = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    if top >= 1 << 16:
        high = (keys[order] >> 16).astype(np.uint16)
        order = order[np.argsort(high, kind="stable")]
    return order


def _name_groups(walk: WalkGraph) -> tuple[dict[str, int], dict[str, list[int]], np.ndarray]:
    """Name key -> its first entity, the keys several entities share, and the edges joining them.

    An entity is known by its key and, if its name ends in a qualifier, by
    the key without it: "Big Hero 6 (film)" (an article's title) and "Big
    Hero 6" (as other chunks mention it) are one thing as far as the walk
    is concerned, so each joins the first entity of its key.
    """
    n = len(walk.keys)
    first = dict(zip(reversed(walk.keys), range(n - 1, -1, -1), strict=True))
    shared: dict[str, list[int]] = {}
    if len(first) < n:  # a key repeats
        for i, key in enumerate(walk.keys):
            if first[key] != i:
                shared.setdefault(key, [first[key]]).append(i)
    for i in [i for i, key in enumerate(walk.alt) if key]:
        key = walk.alt[i]
        j = first.setdefault(key, i)
        if j != i:
            shared.setdefault(key, [j]).append(i)
    pairs: list[tuple[int, int]] = []
    for key, group in shared.items():
        group.sort()
        first[key] = group[0]
        pairs.extend((group[0], other) for other in group[1:])
    return first, shared, np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)


@dataclass(slots=True)
class _Slot:
    """One storage's cached graph, the reader that keeps it current, and the lock that makes one task update it."""

    reader: WalkReader
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    graph: PPRGraph | None = None


_CACHE: weakref.WeakKeyDictionary[Storage, _Slot] = weakref.WeakKeyDictionary()


async def cached_graph(storage: Storage) -> tuple[PPRGraph, bool]:
    """The :class:`PPRGraph` of ``storage`` as stored now (loaded once, then patched per commit).

    Returns the graph and whether this call (re)made it.
    """
    try:
        slot = _CACHE.get(storage)
        if slot is None:
            slot = _CACHE[storage] = _Slot(WalkReader(storage))
    except TypeError:  # a storage object that cannot be weakly referenced: no cache
        walk, _ = await WalkReader(storage).current()
        return PPRGraph.from_walk(walk), True
    async with slot.lock:
        walk, changed = await slot.reader.current()
        if slot.graph is None or changed:
            slot.graph = PPRGraph.from_walk(walk)
            return slot.graph, True
        return slot.graph, False
