"""Records passed between the retrieval stages.

A mode's retrieval function receives a :class:`RetrievalContext` (the
parameter object holding everything a route may need) and returns a
:class:`Retrieved`: ranked entities, relations and directly found chunks.
The shared stages after it (budgets, chunks reached through the graph,
rerank, context) work on these records only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kgrag.retrieval.filter.documents import NO_FILTER, DocFilter
from kgrag.retrieval.keywords.source import KeywordSet
from kgrag.retrieval.param import QueryParam
from kgrag.retrieval.shapes import Location
from kgrag.retrieval.trace import Trace
from kgrag.storage.layout.rows import EdgeRow, NodeRow
from kgrag.types import SEP

if TYPE_CHECKING:
    from kgrag.storage.base import Storage


def as_list(value: object) -> list[str]:
    """A stored list field (a list, or a ``<SEP>``-joined string) as a list."""
    if isinstance(value, list):
        return [str(v) for v in value if v]
    if isinstance(value, str) and value:
        return [v for v in value.split(SEP) if v]
    return []


def description_text(data: Mapping[str, object]) -> str:
    """A stored description with its merge separators turned into line breaks."""
    return str(data.get("description") or "").replace(SEP, "\n")


@dataclass(slots=True)
class EntityHit:
    """An entity found by a route; ``score`` is its vector similarity, if any."""

    name: str
    data: NodeRow
    score: float | None = None
    degree: int = 0
    route: str = "local"


@dataclass(slots=True)
class RelationHit:
    """A relation (canonical endpoints ``src`` <= ``tgt``); ``degree`` is the sum of theirs."""

    src: str
    tgt: str
    data: EdgeRow
    score: float | None = None
    degree: int = 0
    route: str = "local"
    weight: float = field(init=False)

    def __post_init__(self) -> None:
        try:
            self.weight = float(self.data.get("weight", 1.0))
        except (TypeError, ValueError):
            self.weight = 1.0

    @property
    def key(self) -> tuple[str, str]:
        return (self.src, self.tgt)


@dataclass(slots=True)
class PathHit:
    """A chain of relations: ``nodes`` in order, ``edges[i]`` the data of ``nodes[i]`` - ``nodes[i + 1]``.

    ``score`` is the resource the path carries (see :mod:`kgrag.retrieval.modes.path_search`);
    ``open`` when it leads from a seed to no other endpoint.
    """

    nodes: list[str]
    edges: list[EdgeRow]
    score: float
    open: bool = False
    route: str = "path"

    @property
    def hops(self) -> int:
        return len(self.edges)

    @property
    def id(self) -> str:
        """How a path is named in traces: ``A -> B -> C``."""
        return " -> ".join(self.nodes)


@dataclass(slots=True)
class ChunkHit:
    """A chunk candidate; ``content`` and friends are filled once it is read."""

    id: str
    score: float
    route: str
    content: str = ""
    file_path: str = ""
    doc_id: str = ""
    loaded: bool = False
    location: Location = field(default_factory=dict)  # section, pages (block chunker)


@dataclass(slots=True)
class RetrievalContext:
    """Everything a route may need for one question."""

    storage: Storage
    question: str
    param: QueryParam
    keywords: KeywordSet
    vectors: dict[str, np.ndarray]  # "query", "low", "high": L2-normalised
    trace: Trace
    # Which documents the question may retrieve from (see kgrag.retrieval.filter.documents).
    doc_filter: DocFilter = field(default_factory=lambda: NO_FILTER)
    # Optional extras a registered mode may read (e.g. a graph cache).
    extras: dict[str, object] = field(default_factory=dict)


@dataclass(slots=True)
class Retrieved:
    """What a mode found, each list best first.

    ``chunks`` holds chunks found directly (vector / lexical search);
    with ``graph_chunks`` the shared stages add the source chunks of the
    entities and relations that fit their budgets. ``paths`` go into the
    context's path section.
    """

    entities: list[EntityHit] = field(default_factory=list)
    relations: list[RelationHit] = field(default_factory=list)
    chunks: list[ChunkHit] = field(default_factory=list)
    graph_chunks: bool = True
    paths: list[PathHit] = field(default_factory=list)  # chains of relations (path section)
