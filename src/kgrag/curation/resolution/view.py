"""What resolution reads of the graph: one :class:`Entity` per node, chunk texts on demand.

A :class:`GraphView` is plain data, so the scorer runs the same over a
stored index (:func:`load_view`) and over a labelled fixture (tests, the
evaluation script). Chunk texts are fetched only for the chunks two
candidates share (sentence checks) and for alias statements.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kgrag.ingest.ids import entity_vector_id
from kgrag.storage.layout import CHUNKS, ENTITY_VECTORS
from kgrag.storage.layout.rows import NodeRow
from kgrag.storage.layout.typed import TypedGraph

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

UNKNOWN = "UNKNOWN"
MANUAL = "manual_creation"  # kgrag.knowledge.curation.MANUAL: the source of hand-made facts
TextsFn = Callable[[list[str]], Awaitable[dict[str, str]]]


@dataclass(slots=True)
class Entity:
    """One node as resolution sees it."""

    name: str
    type: str = UNKNOWN
    types: frozenset[str] = frozenset()  # every type its fragments gave it (a fifth or more)
    description: str = ""
    sources: frozenset[str] = frozenset()
    neighbours: frozenset[str] = frozenset()

    @property
    def support(self) -> int:
        return len(self.sources) + len(self.neighbours)


def node_types(data: NodeRow) -> frozenset[str]:
    """The types a node's fragments gave it, those with at least a fifth of the votes."""
    counts = data.get("type_counts") or {}
    total = sum(counts.values()) or 1
    kept = {t for t, n in counts.items() if n / total >= 0.2 and t != UNKNOWN}
    main = data.get("entity_type") or UNKNOWN
    return frozenset(kept or ({main} if main != UNKNOWN else set()))


def entity_of(name: str, data: NodeRow, neighbours: Iterable[str]) -> Entity:
    stored: list[str] | str = data.get("source_ids") or []  # a str: an old <SEP>-joined list
    listed = stored.split("<SEP>") if isinstance(stored, str) else stored
    sources = [s for s in listed if s and s != MANUAL]  # a hand edit is no shared chunk
    return Entity(
        name,
        str(data.get("entity_type") or UNKNOWN),
        node_types(data),
        str(data.get("description") or ""),
        frozenset(sources),
        frozenset(neighbours),
    )


@dataclass(slots=True)
class GraphView:
    """The entities, a way to read chunk texts, and (optionally) name vectors."""

    entities: dict[str, Entity]
    texts: TextsFn
    vectors: dict[str, np.ndarray] = field(default_factory=dict)

    @classmethod
    def of(cls, entities: Iterable[Entity], texts: Mapping[str, str]) -> GraphView:
        """A view over in-memory data (fixtures)."""
        table = dict(texts)

        async def read(ids: list[str]) -> dict[str, str]:
            return {i: table[i] for i in ids if i in table}

        return cls({e.name: e for e in entities}, read)


async def load_view(storage: Storage, *, with_vectors: bool = True) -> GraphView:
    """Every node with its neighbours and sources; the stored entity vectors."""
    graph = storage.graph
    names = await graph.all_node_names()
    nodes = await TypedGraph(graph).nodes(names)
    neighbours: dict[str, set[str]] = {n: set() for n in names}
    for a, b, _w in await graph.all_edges():
        neighbours.setdefault(a, set()).add(b)
        neighbours.setdefault(b, set()).add(a)
    entities = {n: entity_of(n, nodes.get(n, {}), neighbours.get(n, ())) for n in names}
    chunks = storage.kv(CHUNKS)

    async def read(ids: list[str]) -> dict[str, str]:
        rows = await chunks.get_many(ids)
        return {i: str(r.get("content", "")) for i, r in zip(ids, rows, strict=True) if r}

    view = GraphView(entities, read)
    if with_vectors:
        view.vectors = await _vectors(storage, names)
    return view


async def _vectors(storage: Storage, names: list[str]) -> dict[str, np.ndarray]:
    store = storage.vectors(ENTITY_VECTORS)
    by_id = {entity_vector_id(n): n for n in names}
    found = await store.get_vectors(list(by_id))
    return {by_id[i]: v for i, v in found.items() if i in by_id}
