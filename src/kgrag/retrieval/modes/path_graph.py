"""The entity graph path search walks: adjacency lists and a name index in memory.

Entities are numbered ``0 .. E-1``; the graph's edges (undirected,
self-loops dropped) become CSR adjacency arrays with their stored weights,
so the neighbours of a node are one slice. ``totals[v]`` is the weight of
all of ``v``'s edges: the flow leaving ``v`` is split by ``weight / total``.

Built from two reads (every node name, every edge with its weight) and
cached per storage object; rebuilt when the graph version (bumped by every
commit) or the node or edge count changes.
"""

from __future__ import annotations

import asyncio
import re
import weakref
from dataclasses import dataclass, field
from itertools import repeat
from typing import TYPE_CHECKING

import numpy as np

from kgrag.knowledge.walk.matrix import name_key, question_keys
from kgrag.storage.layout import GRAPH_VERSION_META
from kgrag.storage.layout.typed import read_meta

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

# A trailing qualifier a question leaves out: "The Prestige (film)" is matched as "The Prestige".
_QUALIFIER = re.compile(r"\s*[(（][^()（）]*[)）]\s*$")
_WORDS = re.compile(r"\w+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
# Words that cannot make a name on their own ("The", "First", "One").
_COMMON = frozenset(
    "the a an of and in on at to for by with is was he she it his her they this that "
    "first second one two new old may will can who what which when where how".split()
)


def specific(key: str) -> bool:
    """Whether a :func:`name_key` form is specific enough to stand for an entity in a question."""
    if _CJK.search(key):
        return len(key) >= 2
    return len(key) >= 3 and not all(w in _COMMON or w.isdigit() for w in key.split())


def _marked(word: str) -> bool:
    return any(c.isupper() or c.isdigit() for c in word)


def written_as_name(question: str, key: str) -> bool:
    """Whether ``key`` occurs in ``question`` first and last word capitalised (or digits; CJK: always)."""
    if _CJK.search(key):
        return True
    pattern = r"(?<!\w)" + r"\W*".join(re.escape(w) for w in key.split()) + r"(?!\w)"
    for m in re.finditer(pattern, question, re.IGNORECASE):
        words = _WORDS.findall(m.group())
        if words and _marked(words[0]) and _marked(words[-1]):
            return True
    return False


@dataclass
class PathGraph:
    """Adjacency (CSR) of the entity graph, edge weights, and entities by name."""

    entities: list[str]
    indptr: np.ndarray  # int64 (E + 1,)
    neighbours: np.ndarray  # int64: the other end of each half-edge
    weights: np.ndarray  # float64: its stored weight
    signature: tuple[int, int, int]
    index: dict[str, int] = field(default_factory=dict)
    names: dict[str, list[int]] = field(default_factory=dict)
    totals: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        has = self.indptr[1:] > self.indptr[:-1]
        if not len(self.weights):  # entities but no relations: reduceat needs one weight
            self.totals = np.zeros(len(has))
            return
        sums = np.add.reduceat(self.weights, np.minimum(self.indptr[:-1], len(self.weights) - 1))
        self.totals = np.where(has, sums, 0.0)

    def around(self, node: int) -> tuple[np.ndarray, np.ndarray]:
        """(neighbours, edge weights) of ``node``."""
        lo, hi = self.indptr[node], self.indptr[node + 1]
        return self.neighbours[lo:hi], self.weights[lo:hi]

    def degree(self, node: int) -> int:
        return int(self.indptr[node + 1] - self.indptr[node])

    def lookup(self, text: str) -> list[int]:
        """Entities whose name (or name without a trailing qualifier) is ``text``, loosely."""
        key = name_key(text)
        return list(self.names.get(key, [])) if specific(key) else []

    def named_in(self, question: str) -> list[list[int]]:
        """Groups of entities named literally in ``question``, in the order it names them.

        A name inside a longer matched name ("Nova" in "Optica Nova") is left
        out, and so is one written in lower case only ("the city where").
        """
        found = sorted(
            (
                k
                for k in question_keys(question)
                if k in self.names and specific(k) and written_as_name(question, k)
            ),
            key=lambda k: (-len(k), k),
        )
        kept: list[str] = []
        for key in found:
            if not any(f" {key} " in f" {longer} " for longer in kept):
                kept.append(key)
        spoken = f" {name_key(question)} "
        kept.sort(key=lambda k: spoken.find(f" {k} "))
        return [self.names[k] for k in kept]


def build_adjacency(
    entities: list[str], rows: list[tuple[str, str, float]], index: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indptr, neighbours, weights) of the undirected edges ``rows``; unknown ends dropped."""
    n = len(entities)
    if not rows:
        return np.zeros(n + 1, np.int64), np.zeros(0, np.int64), np.zeros(0)
    a_names, b_names, w_raw = zip(*rows, strict=False)
    a = np.fromiter(map(index.get, a_names, repeat(-1)), np.int64, len(rows))
    b = np.fromiter(map(index.get, b_names, repeat(-1)), np.int64, len(rows))
    w = np.array([1.0 if x is None else float(x) for x in w_raw], dtype=np.float64)
    keep = (a >= 0) & (b >= 0) & (a != b) & (w > 0)
    src = np.concatenate([a[keep], b[keep]])
    dst = np.concatenate([b[keep], a[keep]])
    weight = np.concatenate([w[keep], w[keep]])
    order = np.lexsort((dst, src))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return indptr, dst[order], weight[order]


async def graph_signature(storage: Storage) -> tuple[int, int, int]:
    """(graph version, nodes, edges): a change in any invalidates the cache."""
    g = storage.graph
    version, nodes, edges = await asyncio.gather(
        read_meta(storage, GRAPH_VERSION_META, int), g.node_count(), g.edge_count()
    )
    return version or 0, nodes or 0, edges or 0


async def build_path_graph(storage: Storage) -> PathGraph:
    """Read every node name and edge of ``storage`` into a :class:`PathGraph`."""
    sig = await graph_signature(storage)
    entities = list(await storage.graph.all_node_names())
    index = {n: i for i, n in enumerate(entities)}
    indptr, neighbours, weights = build_adjacency(entities, await storage.graph.all_edges(), index)
    names: dict[str, list[int]] = {}
    for i, name in enumerate(entities):
        for key in {name_key(name), name_key(_QUALIFIER.sub("", name))}:
            if key:
                names.setdefault(key, []).append(i)
    return PathGraph(entities, indptr, neighbours, weights, sig, index, names)


@dataclass(slots=True)
class _Slot:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    graph: PathGraph | None = None


_CACHE: weakref.WeakKeyDictionary[Storage, _Slot] = weakref.WeakKeyDictionary()


async def cached_path_graph(storage: Storage) -> tuple[PathGraph, bool]:
    """The :class:`PathGraph` of ``storage`` and whether this call (re)built it."""
    try:
        slot = _CACHE.setdefault(storage, _Slot())
    except TypeError:  # a storage object that cannot be weakly referenced: no cache
        return await build_path_graph(storage), True
    async with slot.lock:
        graph = slot.graph
        if graph is not None and graph.signature == await graph_signature(storage):
            return graph, False
        slot.graph = graph = await build_path_graph(storage)
        return graph, True
