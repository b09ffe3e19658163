"""Typed access to a namespace's rows: which row type each namespace holds, and a view that says so.

``TypedKV(storage.kv(CHUNKS), ChunkRow)`` reads and writes ``ChunkRow``\\ s
where the bare :class:`~kgrag.storage.base.KVStore` speaks
:data:`~kgrag.storage.base.JSONObject` (the backends store any JSON object;
the row types are the index's contract). Meta values are read with
:func:`read_meta`, which checks the shape the caller expects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Generic, TypeGuard, TypeVar, cast, get_args, get_origin

from kgrag.errors import StoreCorruptError
from kgrag.storage.layout import (
    ALIASES,
    CHUNK_VECTORS,
    CHUNKS,
    COST_LEDGER,
    DOC_GRAPH,
    EDITS,
    ENTITY_VECTORS,
    FACTS,
    FULL_DOCS,
    LLM_CACHE,
    LOGIN_FAILURES,
    MERGES,
    RELATION_VECTORS,
    SERVER_JOBS,
    SERVER_REFUSED,
    SERVER_TRACKS,
    SPLITS,
    SUPPORT,
    WALK_LOG,
)
from kgrag.storage.layout import rows as r

if TYPE_CHECKING:
    from kgrag.storage.base import GraphStore, KVStore, Storage

Row = TypeVar("Row", bound=Mapping[str, object])
T = TypeVar("T")

# the row type of every key-value namespace whose keys all hold one kind of row
KV_ROWS: dict[str, type[Mapping[str, object]]] = {
    FULL_DOCS: r.FullDocRow,
    CHUNKS: r.ChunkRow,
    FACTS: r.FactsRow,
    SUPPORT: r.SupportRow,
    DOC_GRAPH: r.DocGraphRow,
    LLM_CACHE: r.CacheRow,
    COST_LEDGER: r.CostRow,
    ALIASES: r.AliasRow,
    MERGES: r.MergeRow,
    SPLITS: r.SplitRow,
    EDITS: r.EditRow,
    WALK_LOG: r.WalkLogRow,
    SERVER_JOBS: r.JobRow,
    SERVER_REFUSED: r.RefusalRow,
    SERVER_TRACKS: r.TrackRow,
    LOGIN_FAILURES: r.LoginFailuresRow,
}
# the metadata kept beside each vector
VECTOR_METAS: dict[str, type[Mapping[str, object]]] = {
    ENTITY_VECTORS: r.EntityVectorMeta,
    RELATION_VECTORS: r.RelationVectorMeta,
    CHUNK_VECTORS: r.ChunkVectorMeta,
}


class TypedKV(Generic[Row]):
    """One namespace's rows as ``Row``\\ s (the store is trusted to hold what the index wrote)."""

    def __init__(self, kv: KVStore, row: type[Row]):
        self.kv, self.row = kv, row

    async def get(self, key: str) -> Row | None:
        return cast("Row | None", await self.kv.get(key))

    async def get_many(self, keys: list[str]) -> list[Row | None]:
        return cast("list[Row | None]", await self.kv.get_many(keys))

    async def upsert(self, items: Mapping[str, Row]) -> None:
        await self.kv.upsert(items)

    async def delete(self, keys: Iterable[str]) -> None:
        await self.kv.delete(keys)

    async def keys(self) -> list[str]:
        return await self.kv.keys()


class TypedGraph:
    """The graph's nodes and edges as :class:`~.rows.NodeRow` / :class:`~.rows.EdgeRow`.

    The :class:`~kgrag.storage.base.GraphStore` speaks ``JSONObject``;
    edge keys are canonical pairs, as the store gives them.
    """

    def __init__(self, graph: GraphStore):
        self.graph = graph

    async def node(self, name: str) -> r.NodeRow | None:
        return cast("r.NodeRow | None", await self.graph.get_node(name))

    async def nodes(self, names: list[str]) -> dict[str, r.NodeRow]:
        return cast("dict[str, r.NodeRow]", await self.graph.get_nodes(names))

    async def edge(self, a: str, b: str) -> r.EdgeRow | None:
        return cast("r.EdgeRow | None", await self.graph.get_edge(a, b))

    async def edges(self, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], r.EdgeRow]:
        return cast("dict[tuple[str, str], r.EdgeRow]", await self.graph.get_edges(pairs))


async def read_meta(storage: Storage, key: str, shape: type[T]) -> T | None:
    """The meta value under ``key`` as ``shape``; ``None`` when absent.

    ``shape`` is a JSON type (``int``, ``float``, ``str``, ``bool``, ``object``)
    or ``list[...]`` / ``dict[str, ...]`` of them (``float`` admits integers).
    A value of another shape raises :class:`~kgrag.errors.StoreCorruptError`.
    """
    value = await storage.get_meta(key)
    if value is None or _fits(value, shape):
        return value
    what = str(shape) if get_origin(shape) else shape.__name__
    raise StoreCorruptError(f"the meta value {key!r} is not {what}: {value!r:.200}")


def _fits(value: object, shape: type[T]) -> TypeGuard[T]:
    return _is(value, shape)


def _is(value: object, shape: object) -> bool:
    origin, args = get_origin(shape), get_args(shape)
    if origin is list:
        return isinstance(value, list) and all(_is(v, args[0]) for v in value)
    if origin is dict:
        return isinstance(value, dict) and all(
            isinstance(k, str) and _is(v, args[1]) for k, v in value.items()
        )
    if shape is object:
        return True
    if shape is float:
        return isinstance(value, int | float)
    return isinstance(shape, type) and isinstance(value, shape)
