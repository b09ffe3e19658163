"""What mode ``auto`` knows about a question before it retrieves: no model call, no search.

- **the entities the question names**: graph nodes whose name appears
  literally in it (:meth:`PPRGraph.match_names`, the walk's own name
  seeds), less those the document filter refuses;
- **the reach of the index's names**: the share of the index's chunks
  that the entity behind a randomly picked (entity, chunk) link cites,
  ``sum(c**2) / sum(c) / chunks`` over the entities' chunk counts ``c``.
  It is the share of the index one step of the walk from a chunk to its
  names and back spreads over: about 1% on collections of passages
  (HotpotQA, MuSiQue, CMRC), about 18% in a novel, whose few characters
  recur in every part of it, whatever the chunk size. Computed from the
  cached walk graph once per graph version.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kgrag.retrieval.filter.documents import keep_allowed
from kgrag.retrieval.trace import NO_TRACE

if TYPE_CHECKING:
    from kgrag.knowledge.walk.matrix import PPRGraph
    from kgrag.retrieval.records import RetrievalContext
    from kgrag.storage.base import Storage


@dataclass(frozen=True, slots=True)
class Signals:
    """The facts the router weighs for one question."""

    names: tuple[str, ...]  # entities the question names, longest names first
    reach: float  # the index's name reach (module docstring), 0..1


def name_reach(entity_chunks: np.ndarray, chunks: int) -> float:
    """``sum(c**2) / sum(c) / chunks`` for the entities' chunk counts ``c`` (0 without links)."""
    c = np.asarray(entity_chunks, dtype=np.float64)
    links = float(c.sum())
    if links <= 0 or chunks <= 0:
        return 0.0
    return float((c * c).sum()) / links / chunks


_REACH: weakref.WeakKeyDictionary[Storage, tuple[PPRGraph, float]] = weakref.WeakKeyDictionary()


def index_reach(storage: Storage, graph: PPRGraph) -> float:
    """The name reach of ``graph`` (kept per storage while its graph stays the same)."""
    try:
        cached = _REACH.get(storage)
    except TypeError:  # a storage that cannot be weakly referenced: no cache
        return name_reach(graph.entity_chunks, len(graph.chunks))
    if cached is not None and cached[0] is graph:
        return cached[1]
    reach = name_reach(graph.entity_chunks, len(graph.chunks))
    _REACH[storage] = (graph, reach)
    return reach


async def question_signals(ctx: RetrievalContext, graph: PPRGraph) -> Signals:
    """The :class:`Signals` of ``ctx.question`` over ``graph``."""
    named = [graph.entities[i] for i in graph.match_names(ctx.question)]
    allowed = await keep_allowed(ctx.doc_filter, named, NO_TRACE, kind="entity", route="auto")
    return Signals(tuple(allowed), index_reach(ctx.storage, graph))
