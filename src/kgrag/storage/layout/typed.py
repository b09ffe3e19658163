"""Typed access to a namespace's rows: which row type each namespace holds, and a view that says so.

``TypedKV(storage.kv(CHUNKS), ChunkRow)`` reads and writes ``ChunkRow``\\ s
where the bare :class:`~kgrag.storage.base.KVStore` speaks ``dict[str, Any]``
(the backends store any JSON object; the row types are the index's contract).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

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
    from kgrag.storage.base import GraphStore, KVStore

Row = TypeVar("Row", bound=Mapping[str, Any])

# the row type of every key-value namespace whose keys all hold one kind of row
KV_ROWS: dict[str, type[Mapping[str, Any]]] = {
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
VECTOR_METAS: dict[str, type[Mapping[str, Any]]] = {
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
        await self.kv.upsert(cast("Mapping[str, dict[str, Any]]", items))

    async def delete(self, keys: Iterable[str]) -> None:
        await self.kv.delete(keys)

    async def keys(self) -> list[str]:
        return await self.kv.keys()


class TypedGraph:
    """The graph's nodes and edges as :class:`~.rows.NodeRow` / :class:`~.rows.EdgeRow`.

    The :class:`~kgrag.storage.base.GraphStore` speaks ``dict[str, Any]``;
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
