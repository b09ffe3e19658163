"""The walk graph: entities and chunks as integer arrays, in one canonical form.

What the ``ppr`` query mode walks over, kept apart from the store's rows so
that it can be saved, loaded and patched without reading the whole graph:

- ``entities`` and ``chunks``: sorted names and chunk ids (node ``i`` is
  ``entities[i]``; chunk ``j`` is ``chunks[j]``);
- ``ec``: the (entity, chunk) pairs of each entity's ``source_ids`` that
  are live chunks, sorted and distinct, with ``sim``, the cosine of the
  entity's and the chunk's vectors (0 where either is missing);
- ``ee``: the graph's edges as (a, b) with ``a < b`` (self-loops and edges
  to missing entities dropped), sorted, with their stored ``weight``;
- ``keys`` and ``alt``: each entity's name as questions are matched against
  it (:func:`name_key`) and the same without a trailing qualifier ("" when
  there is none).

:func:`assemble` makes one from rows read in full;
:func:`~kgrag.knowledge.walk.patch.patch` replaces the rows of some entities
and chunks in an existing one, and gives the same arrays :func:`assemble`
would give for the new rows. Pure functions: reading and writing the store
is :mod:`kgrag.knowledge.walk.store`'s job.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

_WORD = re.compile(r"\w+")
# A trailing qualifier a question leaves out: "The Prestige (film)" is matched as "The Prestige" too.
_QUALIFIER = re.compile(r"\s*[(（][^()（）]*[)）]\s*$")

Edge = tuple[str, str, float]


def name_key(name: str) -> str:
    """A name as matched against questions: lower case, word characters joined by spaces."""
    return " ".join(_WORD.findall(name.casefold()))


def alt_key(name: str) -> str:
    """:func:`name_key` of ``name`` without a trailing qualifier ("" when that changes nothing)."""
    key = name_key(_QUALIFIER.sub("", name))
    return "" if key == name_key(name) else key


@dataclass(slots=True)
class WalkGraph:
    """Entities, chunks and their pairs as arrays (see the module docstring)."""

    version: int
    entities: list[str]
    chunks: list[str]
    keys: list[str]
    alt: list[str]
    ec: np.ndarray  # int64 (L, 2)
    sim: np.ndarray  # float32 (L,)
    ee: np.ndarray  # int64 (M, 2)
    weight: np.ndarray  # float64 (M,)


@dataclass(slots=True)
class Rows:
    """The store's rows for some entities and chunks (all of them, or those a change touched).

    ``sources[i]`` are the chunk ids ``names[i]`` cites; ``edges`` every
    edge touching one of ``names``. Names and chunks in ``gone`` /
    ``chunks_gone`` no longer exist.
    """

    names: list[str] = field(default_factory=list)
    sources: list[list[str]] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    gone: set[str] = field(default_factory=set)
    chunks: list[str] = field(default_factory=list)
    chunks_gone: set[str] = field(default_factory=set)


def empty(version: int = 0) -> WalkGraph:
    """The walk graph of an empty index."""
    return assemble(version, Rows())


def assemble(version: int, rows: Rows) -> WalkGraph:
    """The walk graph of ``rows`` read in full (similarities zero; see :func:`pending_sims`)."""
    order = sorted(range(len(rows.names)), key=rows.names.__getitem__)
    entities = [rows.names[i] for i in order]
    chunks = sorted(set(rows.chunks))
    e_index = {n: i for i, n in enumerate(entities)}
    c_index = {c: j for j, c in enumerate(chunks)}
    ec = _pairs(range(len(entities)), [rows.sources[i] for i in order], c_index)
    ee, weight = _edges(rows.edges, e_index)
    return WalkGraph(
        version,
        entities,
        chunks,
        [name_key(n) for n in entities],
        [alt_key(n) for n in entities],
        ec,
        np.zeros(len(ec), np.float32),
        ee,
        weight,
    )


def _pairs(
    entities: Sequence[int], sources: Sequence[Iterable[str]], c_index: dict[str, int]
) -> np.ndarray:
    """Sorted distinct (entity, chunk) pairs: entity ``entities[i]`` cites ``sources[i]``."""
    rows = [
        (e, j)
        for e, ids in zip(entities, sources, strict=True)
        for j in {c_index[c] for c in ids if c in c_index}
    ]
    pairs = np.array(rows, dtype=np.int64).reshape(-1, 2)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def _edges(edges: Iterable[Edge], e_index: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """(pairs with a < b, weights) of ``edges`` between known entities; sorted, distinct."""
    found: dict[tuple[int, int], float] = {}
    for a, b, w in edges:
        i, j = e_index.get(a, -1), e_index.get(b, -1)
        if i >= 0 and j >= 0 and i != j:
            found[(min(i, j), max(i, j))] = max(float(w if w is not None else 1.0), 0.0)
    keys = sorted(found)
    pairs = np.array(keys, dtype=np.int64).reshape(-1, 2)
    return pairs, np.array([found[k] for k in keys], dtype=np.float64)


def differences(have: WalkGraph, want: WalkGraph, sim_tol: float = 1e-5) -> list[str]:
    """How ``have`` differs from ``want`` (empty when they are the same graph)."""
    out: list[str] = []
    for label, a, b in (
        ("entities", have.entities, want.entities),
        ("chunks", have.chunks, want.chunks),
    ):
        if a != b:
            out.append(
                f"walk graph {label}: {len(set(b) - set(a))} missing, {len(set(a) - set(b))} extra"
            )
    if out:
        return out
    if have.keys != want.keys or have.alt != want.alt:
        out.append("walk graph: name keys differ")
    if have.ec.shape != want.ec.shape or not np.array_equal(have.ec, want.ec):
        out.append(f"walk graph: {len(have.ec)} entity-chunk pairs, the graph gives {len(want.ec)}")
    elif not np.allclose(have.sim, want.sim, atol=sim_tol, rtol=0):
        out.append("walk graph: entity-chunk similarities differ from the vectors")
    if have.ee.shape != want.ee.shape or not np.array_equal(have.ee, want.ee):
        out.append(f"walk graph: {len(have.ee)} edges, the graph gives {len(want.ee)}")
    elif not np.array_equal(have.weight, want.weight):
        out.append("walk graph: edge weights differ from the graph")
    return out
