"""Protocols every storage backend implements.

A backend provides one :class:`Storage` object that hands out the four
roles: key-value namespaces, vector namespaces, the graph, and the document
status table (plus an optional lexical index over chunks). All methods are
async so remote backends fit the same shape.

``Storage.transaction()`` groups writes: the pipeline commits one whole
document (chunks, graph, vectors, status) in one transaction, so a crash
leaves either all of it or none of it. Backends without transactions make
it a no-op and document the weaker guarantee.

``Storage.writer()`` is the exclusive writer lease of the workdir: one
writer at a time, across tasks and processes. Whoever writes (indexing,
deleting documents) holds it for the whole job; readers need nothing and
see every commit as soon as it is made, whichever process made it.

Optional features are *declared*: ``Storage.capabilities`` is the set of
:class:`Capability` members a backend offers, and
:mod:`kgrag.storage.capabilities` hands out the typed feature (or raises
:class:`~kgrag.errors.MissingCapabilityError` naming backend and
capability). Callers never probe a store with ``getattr``.

Graph conventions:
- nodes are keyed by entity name (case-sensitive);
- edges are undirected and keyed by :func:`edge_key` (the sorted pair);
  the direction a relation was stated in lives in the edge data;
- node and edge data are JSON-serialisable dicts.

Rows cross this seam as JSON objects: written as any ``Mapping[str, object]``
(the row TypedDicts of :mod:`kgrag.storage.layout.rows` among them); key-value
rows, graph rows and vector metadata are read back as :data:`JSONObject`
(values typed ``object``: the reader narrows them, or reads through
:class:`kgrag.storage.layout.typed.TypedKV` / ``TypedGraph``), and meta values
as ``object`` (read through :func:`kgrag.storage.layout.typed.read_meta`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol, TypeAlias, runtime_checkable

import numpy as np

from kgrag.errors import StorageError
from kgrag.types import DocRecord, DocStatus

JSONObject: TypeAlias = dict[str, object]
"""A row as the stores read it back: a JSON object whose values the reader narrows."""


def edge_key(a: str, b: str) -> tuple[str, str]:
    """The canonical (undirected) key of the edge between ``a`` and ``b``."""
    return (a, b) if a <= b else (b, a)


def edge_weight(data: Mapping[str, object]) -> float:
    """The ``weight`` of an edge's data (1.0 when absent), which backends keep in a column."""
    weight = data.get("weight", 1.0)
    if isinstance(weight, int | float | str):
        return float(weight)
    raise StorageError(f"an edge's weight is not a number: {weight!r}")


class Capability(Enum):
    """An optional feature a backend may declare in ``Storage.capabilities``.

    Each one names what a declaring backend offers (see
    :mod:`kgrag.storage.capabilities` for the typed views):
    """

    MANY_WRITERS = "many_writers"
    """Several writer processes at once: ``writer(shared=True)`` admits other
    shared holders, and ``serial()`` is a real lock across processes."""

    WORK_QUEUE = "work_queue"
    """``storage.queue``: a :class:`WorkQueue` of leases for worker processes."""

    KEY_CLAIMS = "key_claims"
    """``storage.claim_keys(keys, limit)``: non-blocking claims on single keys."""

    VECTOR_INDEX_BUILD = "vector_index_build"
    """``await storage.build_vector_indexes()``: build the ANN indexes a bulk load deferred."""

    @property
    def what(self) -> str:
        """The capability in words, as error messages name it."""
        return _WHAT[self]


_WHAT = {
    Capability.MANY_WRITERS: "support for many writers",
    Capability.WORK_QUEUE: "work queue",
    Capability.KEY_CLAIMS: "key claims",
    Capability.VECTOR_INDEX_BUILD: "deferred vector index build",
}


@dataclass(slots=True)
class VectorHit:
    id: str
    score: float  # cosine similarity in [-1, 1]
    meta: JSONObject = field(default_factory=dict)


@runtime_checkable
class KVStore(Protocol):
    namespace: str

    async def get(self, key: str) -> JSONObject | None: ...
    async def get_many(self, keys: list[str]) -> list[JSONObject | None]: ...
    async def upsert(self, items: Mapping[str, Mapping[str, object]]) -> None: ...
    async def delete(self, keys: Iterable[str]) -> None: ...
    async def missing(self, keys: Iterable[str]) -> set[str]: ...
    async def keys(self) -> list[str]: ...
    async def count(self) -> int: ...


@runtime_checkable
class VectorStore(Protocol):
    """Cosine-similarity search over float vectors with a small metadata dict."""

    namespace: str

    async def upsert(
        self, ids: list[str], vectors: np.ndarray, metas: Sequence[Mapping[str, object]]
    ) -> None: ...
    async def query(
        self, vector: np.ndarray, top_k: int, threshold: float | None = None
    ) -> list[VectorHit]: ...
    async def get_vectors(self, ids: list[str]) -> dict[str, np.ndarray]: ...
    async def get_metas(self, ids: list[str]) -> dict[str, JSONObject]: ...
    async def delete(self, ids: Iterable[str]) -> None: ...
    async def count(self) -> int: ...
    async def ids(self) -> list[str]:
        """Every stored id, sorted."""


@runtime_checkable
class GraphStore(Protocol):
    async def get_node(self, name: str) -> JSONObject | None: ...
    async def get_nodes(self, names: list[str]) -> dict[str, JSONObject]: ...
    async def upsert_nodes(self, nodes: Mapping[str, Mapping[str, object]]) -> None: ...
    async def delete_nodes(self, names: Iterable[str]) -> None:
        """Delete nodes and every edge touching them."""

    async def get_edge(self, a: str, b: str) -> JSONObject | None: ...
    async def get_edges(self, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], JSONObject]:
        """Keys of the result are canonical :func:`edge_key` pairs."""

    async def upsert_edges(self, edges: Mapping[tuple[str, str], Mapping[str, object]]) -> None: ...
    async def delete_edges(self, pairs: Iterable[tuple[str, str]]) -> None: ...
    async def node_edges(self, names: list[str]) -> dict[str, list[tuple[str, str]]]:
        """For each name, the canonical keys of its edges (empty list if none)."""

    async def node_degrees(self, names: list[str]) -> dict[str, int]: ...
    async def node_count(self) -> int: ...
    async def edge_count(self) -> int: ...
    async def all_node_names(self) -> list[str]: ...
    async def all_edges(self) -> list[tuple[str, str, float]]:
        """Every edge as (a, b, weight) with (a, b) canonical."""


@runtime_checkable
class DocStatusStore(Protocol):
    async def get(self, doc_id: str) -> DocRecord | None: ...
    async def get_many(self, doc_ids: list[str]) -> dict[str, DocRecord]: ...
    async def upsert(self, records: list[DocRecord]) -> None: ...
    async def by_status(self, *statuses: DocStatus) -> list[DocRecord]:
        """Records with any of ``statuses``, ordered by ``enqueue_seq``."""

    async def counts(self) -> dict[str, int]: ...
    async def delete(self, doc_ids: Iterable[str]) -> None: ...
    async def next_seq(self) -> int:
        """A number larger than every enqueue_seq stored so far."""


@runtime_checkable
class LexicalIndex(Protocol):
    """Full-text (BM25) search over chunk texts."""

    async def add(self, items: Mapping[str, str]) -> None: ...
    async def delete(self, ids: Iterable[str]) -> None: ...
    async def search(self, query: str, top_k: int) -> list[tuple[str, float]]:
        """(id, score) pairs, best first; higher scores are better."""

    async def ids(self) -> list[str]:
        """Every indexed id, sorted."""

    async def count(self) -> int: ...


@dataclass(frozen=True, slots=True)
class QueueCounts:
    """What a work queue holds now."""

    pending: int
    leased: int  # processing under a live lease
    expired: int  # processing whose lease ran out (claimable)


@runtime_checkable
class WorkQueue(Protocol):
    """Leases on queued documents, for many workers (a backend with many writers).

    Offered as ``storage.queue`` by backends declaring
    :attr:`Capability.WORK_QUEUE` (postgres).
    """

    async def claim(self, owner: str, limit: int, lease_s: float) -> list[tuple[DocRecord, int]]:
        """Up to ``limit`` claimable documents, each with its attempt number."""

    async def renew(self, owner: str, ids: list[str], lease_s: float) -> set[str]: ...
    async def started(self, owner: str, record: DocRecord) -> None: ...
    async def guard(self, owner: str, doc_id: str) -> None:
        """Inside a commit's transaction: raise LeaseLostError unless still held."""

    async def settle(self, owner: str, record: DocRecord, retry_after_s: float | None) -> bool: ...
    async def release_all(self, owner: str) -> int: ...
    async def counts(self) -> QueueCounts: ...


class Storage(Protocol):
    """One backend instance serving every role for one workdir/workspace."""

    name: str
    capabilities: frozenset[Capability]
    """The optional features this instance offers (see :class:`Capability`)."""

    @property
    def workspace(self) -> str | None:
        """The named index inside a shared server (postgres); ``None`` for a file store."""

    @property
    def label(self) -> str:
        """How the store names itself in reports and progress records (no password)."""

    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def exists(self) -> bool:
        """Whether the index exists (a file, a schema); opening creates it."""

    async def destroy(self) -> None:
        """Delete the whole index; opening afterwards starts an empty one.

        Call it on a closed store (a server store may also be open); a store
        that keeps nothing (in memory) has nothing to delete.
        """

    def transaction(self) -> AbstractAsyncContextManager[None]: ...
    def writer(
        self,
        *,
        wait: bool = True,
        on_wait: Callable[[str], None] | None = None,
        shared: bool = False,
    ) -> AbstractAsyncContextManager[None]:
        """The exclusive writer lease: ``async with storage.writer(): ...``.

        ``shared``: a backend with many writers (postgres workers) lets shared
        holders in together and keeps exclusive ones out; a backend with one
        writer treats it as exclusive.

        Across processes, a backend with files takes an OS lock that the
        kernel releases when the holder exits or dies. If another process
        holds it: with ``wait=False`` raise
        :class:`~kgrag.errors.WorkdirBusyError` naming that process (pid and
        command line); with ``wait=True`` call ``on_wait(message)`` once and
        wait until it is free. Within a process, tasks asking for it run
        one after the other (whatever ``wait`` says); the holding task and
        tasks it starts inside the block re-enter it without waiting.
        Take it outside ``transaction()`` blocks, not inside them: a task
        holding a transaction while waiting for the lease could deadlock
        with the lease holder waiting for the transaction.
        """

    def serial(self) -> AbstractAsyncContextManager[None]:
        """A change's read-plan-write section, one at a time across every writer.

        The pipeline reads what a change touches, plans the new graph rows
        and writes them inside it, so no other writer commits in between.
        One writer process at a time (the embedded store): a no-op. Many
        (PostgreSQL workers): a workspace-wide lock.
        """

    def kv(self, namespace: str) -> KVStore: ...
    def vectors(self, namespace: str) -> VectorStore: ...
    @property
    def graph(self) -> GraphStore: ...
    @property
    def doc_status(self) -> DocStatusStore: ...
    @property
    def lexical(self) -> LexicalIndex | None: ...
    async def get_meta(self, key: str) -> object:
        """The JSON value stored under ``key``, or ``None``; read it through
        :func:`kgrag.storage.layout.typed.read_meta`, which checks its shape."""

    async def set_meta(self, key: str, value: object) -> None:
        """Store ``value`` (any JSON value) under ``key``."""

    async def kv_namespaces(self) -> list[str]:
        """Every key-value namespace holding a key, sorted."""

    async def vector_namespaces(self) -> list[str]:
        """Every vector namespace ever created, sorted."""

    async def meta_keys(self) -> list[str]:
        """Every meta key, sorted."""
