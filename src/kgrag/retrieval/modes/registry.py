"""The registry of query modes.

A mode is one async function ``retrieve(ctx) -> Retrieved`` plus what it
needs: which embeddings of the question (``query``, ``low`` for the
low-level keywords, ``high`` for the high-level ones) and whether it
needs keywords at all. Adding a mode is one function and one
:func:`register_mode` call::

    async def ppr(ctx: RetrievalContext) -> Retrieved: ...
    register_mode("ppr", ppr, vectors={"query", "low"})

``path`` (:mod:`kgrag.retrieval.modes.path`) lists chains of relations
between the question's entities; ``mix`` adds them for a multi-hop
question. ``bypass`` is registered with ``retrieve=None``: no retrieval, the
question and the conversation go straight to the chat model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from kgrag.errors import QueryError
from kgrag.retrieval.modes.chunks import direct_chunks
from kgrag.retrieval.modes.kg import global_route, hybrid_route, local_route
from kgrag.retrieval.modes.path import mix_paths, path_route
from kgrag.retrieval.modes.search import round_robin
from kgrag.retrieval.records import RetrievalContext, Retrieved

Retrieve = Callable[[RetrievalContext], Awaitable[Retrieved]]


@dataclass(frozen=True, slots=True)
class ModeSpec:
    name: str
    retrieve: Retrieve | None
    vectors: frozenset[str]
    keywords: bool


_MODES: dict[str, ModeSpec] = {}
# Modes whose module registers itself on import.
_LAZY = {"ppr": "kgrag.retrieval.modes.ppr", "auto": "kgrag.retrieval.modes.auto"}


def register_mode(
    name: str,
    retrieve: Retrieve | None,
    *,
    vectors: Iterable[str] = ("query",),
    keywords: bool | None = None,
) -> None:
    """Register (or replace) the mode ``name``.

    ``keywords`` defaults to whether ``vectors`` names ``low`` or ``high``.
    """
    vecs = frozenset(vectors)
    unknown = vecs - {"query", "low", "high"}
    if unknown:
        raise QueryError(f"mode {name!r}: unknown vectors {sorted(unknown)}")
    needs = bool(vecs & {"low", "high"}) if keywords is None else keywords
    _MODES[name] = ModeSpec(name, retrieve, vecs, needs)


def get_mode(name: str) -> ModeSpec:
    """The spec of mode ``name`` (importing a lazily registered one)."""
    if name not in _MODES and name in _LAZY:
        import importlib

        try:
            importlib.import_module(_LAZY[name])
        except ModuleNotFoundError as exc:
            if exc.name != _LAZY[name]:
                raise QueryError(f"query mode {name!r} needs a missing module: {exc}") from exc
    if name not in _MODES:
        raise QueryError(f"unknown query mode {name!r}; known modes: {', '.join(mode_names())}")
    return _MODES[name]


def mode_names() -> list[str]:
    return sorted(_MODES)


async def _naive(ctx: RetrievalContext) -> Retrieved:
    return Retrieved(chunks=await direct_chunks(ctx), graph_chunks=False)


async def _local(ctx: RetrievalContext) -> Retrieved:
    entities, relations = await local_route(ctx)
    return Retrieved(entities, relations)


async def _global(ctx: RetrievalContext) -> Retrieved:
    entities, relations = await global_route(ctx)
    return Retrieved(entities, relations)


async def _hybrid(ctx: RetrievalContext) -> Retrieved:
    entities, relations = await hybrid_route(ctx)
    return Retrieved(entities, relations)


async def _mix(ctx: RetrievalContext) -> Retrieved:
    (entities, relations), chunks, found = await asyncio.gather(
        hybrid_route(ctx), direct_chunks(ctx), mix_paths(ctx)
    )
    if found.paths:  # a multi-hop question: its paths' relations and evidence join in
        relations = round_robin([relations, found.relations], key=lambda r: r.key)
        chunks = round_robin([chunks, found.chunks], key=lambda c: c.id)
    return Retrieved(entities, relations, chunks, paths=found.paths)


async def _path(ctx: RetrievalContext) -> Retrieved:
    found, direct = await asyncio.gather(path_route(ctx), direct_chunks(ctx))
    chunks = round_robin([found.chunks, direct], key=lambda c: c.id)
    return Retrieved(found.entities, found.relations, chunks, graph_chunks=False, paths=found.paths)


register_mode("naive", _naive, vectors={"query"})
register_mode("local", _local, vectors={"query", "low"})
register_mode("global", _global, vectors={"query", "high"})
register_mode("hybrid", _hybrid, vectors={"query", "low", "high"})
register_mode("mix", _mix, vectors={"query", "low", "high"})
register_mode("path", _path, vectors={"query", "low", "high"})
register_mode("bypass", None, vectors=(), keywords=False)
