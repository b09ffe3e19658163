"""Query filters: which documents a query may retrieve from.

A document is *retrievable* when it is processed, not disabled, and passes
the query's filters (:attr:`~kgrag.retrieval.param.QueryParam.doc_ids`,
``path_glob``, ``where``). :func:`build_filter` turns them into a
:class:`DocFilter` once per query, and every route asks it about what it
found:

- a chunk is allowed when one of the documents containing it is (the
  ``doc_ids`` of its ``text_chunks`` row; by id, the chunks listed in the
  allowed documents' ``doc_graph`` records, which hold the same facts);
- an entity or a relation when one of the chunks supporting it is
  (``graph_support``, read once per key and query, then cached).

With no filter given, only disabled documents are kept out: a chunk is
blocked when every document containing it is disabled, an entity when
every chunk supporting it is blocked. With no filter and nothing
disabled the filter is inactive and costs one doc-status read.

While a filter is active, a search that finds fewer than its budget of
allowed hits asks again for :data:`OVERFETCH` times as many, at most
:data:`MAX_WIDENINGS` times (so up to 64 times the budget).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from kgrag.errors import DocumentNotFoundError
from kgrag.ingest.names import records_named
from kgrag.retrieval.shapes import FilterData, FilterSpecData
from kgrag.retrieval.trace import Trace, relation_id
from kgrag.storage.base import VectorHit, edge_key
from kgrag.storage.layout import CHUNKS, DOC_GRAPH, SUPPORT, support_key
from kgrag.storage.layout.rows import DocGraphRow, SupportRow
from kgrag.storage.layout.typed import TypedKV
from kgrag.types import DocRecord, DocStatus

if TYPE_CHECKING:
    from kgrag.retrieval.param import QueryParam
    from kgrag.storage.base import Storage

NOT_SELECTED = "filtered out: document not selected"
DISABLED = "document disabled"
UNSUPPORTED = "filtered out: no live chunk supports it"
# While a filter leaves a search short, it asks again for this many times the hits, this many times at most.
OVERFETCH = 4
MAX_WIDENINGS = 3

Key = str | tuple[str, str]  # an entity name or a canonical relation pair
K = TypeVar("K", str, tuple[str, str])  # keys of one kind, kept as that kind
Gate = Callable[[list[VectorHit]], Awaitable[list[str | None]]]


def _strings(value: Iterable[object] | str | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value else ()
    return tuple(str(v) for v in value if str(v))


def path_matches(record: DocRecord, pattern: str) -> bool:
    """Whether ``record``'s source or file path matches the glob ``pattern``.

    A relative pattern is also tried made absolute (against the working directory).
    """
    paths = [p for p in (record.source, record.file_path) if p]
    patterns = {pattern} if os.path.isabs(pattern) else {pattern, os.path.abspath(pattern)}
    return any(fnmatch.fnmatchcase(p, pat) for p in paths for pat in patterns)


def chunk_owners(row: Mapping[str, object]) -> list[str]:
    """The documents containing a ``text_chunks`` row (``doc_ids``, else its ``doc_id``)."""
    owners = row.get("doc_ids")
    if owners and isinstance(owners, Iterable):
        return [str(d) for d in owners]
    return [str(row["doc_id"])] if row.get("doc_id") else []


@dataclass(frozen=True, slots=True)
class FilterSpec:
    """The filters a query asked for; kinds combine with AND, entries of one kind with OR."""

    doc_ids: tuple[str, ...] = ()
    path_glob: tuple[str, ...] = ()
    where: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_param(cls, param: QueryParam) -> FilterSpec:
        where = getattr(param, "where", None) or {}
        return cls(
            _strings(getattr(param, "doc_ids", None)),
            _strings(getattr(param, "path_glob", None)),
            tuple(sorted((str(k), str(v)) for k, v in where.items())),
        )

    @property
    def given(self) -> bool:
        return bool(self.doc_ids or self.path_glob or self.where)

    def matches(self, record: DocRecord) -> bool:
        """Whether ``record`` passes ``path_glob`` and ``where`` (``doc_ids`` is resolved apart)."""
        if self.path_glob and not any(path_matches(record, p) for p in self.path_glob):
            return False
        meta = record.metadata or {}
        return all(k in meta and str(meta[k]) == v for k, v in self.where)

    def to_dict(self) -> FilterSpecData:
        return {
            "doc_ids": list(self.doc_ids),
            "path_glob": list(self.path_glob),
            "where": dict(self.where),
        }


@dataclass(frozen=True, slots=True)
class Selection:
    """What an active filter lets through.

    ``docs`` None: every document not disabled, less the ``blocked`` chunks
    (those only disabled documents contain). Otherwise the allowed
    documents and ``chunks``, theirs; ``blocked`` then lists the chunks of
    disabled documents, to word drop reasons. ``excluded``: documents named
    in ``doc_ids`` that are not retrievable, and why.
    """

    docs: frozenset[str] | None
    chunks: frozenset[str]
    disabled: frozenset[str]
    blocked: frozenset[str]
    excluded: dict[str, str] = field(default_factory=dict)


class DocFilter:
    """One query's verdicts on documents, chunks and graph keys (support read once per key)."""

    def __init__(
        self,
        storage: Storage | None,
        spec: FilterSpec = FilterSpec(),
        selection: Selection | None = None,
    ):
        self.storage, self.spec, self.selection = storage, spec, selection
        self._support: dict[Key, list[str]] = {}

    @property
    def is_active(self) -> bool:
        """Whether anything is filtered at all."""
        return self.selection is not None

    def allows_doc(self, doc_id: str) -> bool:
        """Whether the query may retrieve from document ``doc_id``."""
        sel = self.selection
        if sel is None:
            return True
        return doc_id in sel.docs if sel.docs is not None else doc_id not in sel.disabled

    def allows_chunk(self, row: Mapping[str, object]) -> bool:
        """Whether a ``text_chunks`` row may be retrieved: one of its documents is allowed."""
        if self.selection is None:
            return True
        owners = chunk_owners(row)
        if not owners:
            return self.selection.docs is None
        return any(self.allows_doc(d) for d in owners)

    def allows_chunk_id(self, chunk_id: str) -> bool:
        """Whether chunk ``chunk_id`` may be retrieved (by the chunk lists resolved up front, no I/O)."""
        sel = self.selection
        if sel is None:
            return True
        return chunk_id in sel.chunks if sel.docs is not None else chunk_id not in sel.blocked

    def chunk_reason(self, chunk_id: str) -> str:
        """Why ``chunk_id`` is not allowed (for the trace)."""
        return (
            DISABLED
            if self.selection is not None and chunk_id in self.selection.blocked
            else NOT_SELECTED
        )

    async def allowed_keys(self, keys: Iterable[Key]) -> set[Key]:
        """The entity names / relation pairs among ``keys`` one of whose supporting chunks is allowed."""
        keys = list(dict.fromkeys(keys))
        if self.selection is None or self.storage is None:  # nothing filtered (NO_FILTER)
            return set(keys)
        todo = [k for k in keys if k not in self._support]
        if todo:
            support = TypedKV(self.storage.kv(SUPPORT), SupportRow)
            rows = await support.get_many([support_key(k) for k in todo])
            self._support.update(
                (k, list(r.get("chunks", [])) if r else [])
                for k, r in zip(todo, rows, strict=False)
            )
        return {k for k in keys if any(self.allows_chunk_id(c) for c in self._support[k])}

    def key_reason(self, key: Key) -> str:
        """Why ``key`` is not allowed (after :meth:`allowed_keys` judged it)."""
        chunks = self._support.get(key)
        if not chunks:
            return UNSUPPORTED
        blocked = self.selection.blocked if self.selection is not None else frozenset()
        return DISABLED if all(c in blocked for c in chunks) else NOT_SELECTED

    def allowed_support(self, key: Key) -> list[str]:
        """The allowed chunks supporting ``key``, as far as :meth:`allowed_keys` read them."""
        return [c for c in self._support.get(key, ()) if self.allows_chunk_id(c)]

    def describe(self) -> FilterData:
        """What was applied, for ``query_data`` and the trace."""
        sel = self.selection
        spec = self.spec.to_dict()
        out: FilterData = {
            "active": sel is not None,
            "doc_ids": spec["doc_ids"],
            "path_glob": spec["path_glob"],
            "where": spec["where"],
            "documents": None,
            "disabled": sorted(sel.disabled) if sel else [],
        }
        if sel is not None and sel.docs is not None:
            out["documents"] = len(sel.docs)
        if sel is not None and sel.excluded:
            out["excluded"] = dict(sel.excluded)
        return out


# The filter of a query that filters nothing.
NO_FILTER = DocFilter(None)


async def build_filter(storage: Storage, param: QueryParam) -> DocFilter:
    """The :class:`DocFilter` of ``param``'s filters and the disabled documents.

    Raises :class:`DocumentNotFoundError` when a ``doc_ids`` entry names no document.
    """
    spec = FilterSpec.from_param(param)
    records = await storage.doc_status.by_status(*DocStatus)
    disabled = [r for r in records if r.disabled]
    if not spec.given and not disabled:
        return DocFilter(storage, spec)
    off = frozenset(r.id for r in disabled)
    disabled_chunks = await chunks_of(storage, disabled)
    if not spec.given:
        blocked = await _owned_only_by(storage, disabled_chunks, off)
        return DocFilter(storage, spec, Selection(None, frozenset(), off, blocked))
    named = named_documents(spec.doc_ids, records) if spec.doc_ids else None
    allowed, excluded = _select(records, spec, named)
    chunks = await chunks_of(storage, allowed)
    selection = Selection(frozenset(r.id for r in allowed), chunks, off, disabled_chunks, excluded)
    return DocFilter(storage, spec, selection)


def named_documents(given: Iterable[str], records: list[DocRecord]) -> set[str]:
    """Ids of the documents ``given`` names (by id, source, path or listed name); raises for unknown ones.

    A name several documents answer to (:func:`kgrag.ingest.names.records_named`) selects them all.
    """
    found: set[str] = set()
    missing: list[str] = []
    for name in given:
        hits = records_named(name, records)
        if not hits:
            missing.append(name)
        found.update(r.id for r in hits)
    if missing:
        raise DocumentNotFoundError(
            f"query filter: no indexed document has the id {', '.join(map(repr, missing))} "
            "(see `kgrag docs` for ids and paths)"
        )
    return found


def _select(
    records: list[DocRecord], spec: FilterSpec, named: set[str] | None
) -> tuple[list[DocRecord], dict[str, str]]:
    """(retrievable records passing ``spec``, named documents left out and why)."""
    allowed: list[DocRecord] = []
    excluded: dict[str, str] = {}
    for r in records:
        if (named is not None and r.id not in named) or not spec.matches(r):
            continue
        if r.disabled:
            why = "disabled"
        else:  # a document being re-indexed keeps serving its committed version
            allowed.append(r)
            continue
        if named is not None:
            excluded[r.id] = why
    return allowed, excluded


async def chunks_of(storage: Storage, records: list[DocRecord]) -> frozenset[str]:
    """The chunks of ``records``' committed versions (``doc_graph``; none if never committed)."""
    if not records:
        return frozenset()
    rows = await TypedKV(storage.kv(DOC_GRAPH), DocGraphRow).get_many([r.id for r in records])
    return frozenset(c for row in rows if row for c in row.get("chunks", []))


async def _owned_only_by(
    storage: Storage, chunk_ids: frozenset[str], docs: frozenset[str]
) -> frozenset[str]:
    """Those of ``chunk_ids`` that no document outside ``docs`` contains."""
    ids = sorted(chunk_ids)
    rows = await storage.kv(CHUNKS).get_many(ids) if ids else []
    return frozenset(
        c
        for c, row in zip(ids, rows, strict=False)
        if row is None or all(d in docs for d in chunk_owners(row))
    )


def _hit_key(kind: str, meta: Mapping[str, object]) -> Key | None:
    if kind == "entity":
        return str(meta["name"]) if meta.get("name") is not None else None
    if meta.get("src") is None or meta.get("tgt") is None:
        return None
    return edge_key(str(meta["src"]), str(meta["tgt"]))


def hit_gate(flt: DocFilter, kind: str) -> Gate | None:
    """An async ``hits -> reasons`` (None: kept) for vector hits of ``kind``; None when nothing is filtered.

    ``kind`` is ``chunk`` (hit ids are chunk ids), ``entity`` or ``relation``
    (keys read from the hits' metadata).
    """
    if not flt.is_active:
        return None
    if kind == "chunk":

        async def chunks(hits: list[VectorHit]) -> list[str | None]:
            return [None if flt.allows_chunk_id(h.id) else flt.chunk_reason(h.id) for h in hits]

        return chunks

    async def keyed(hits: list[VectorHit]) -> list[str | None]:
        keys = [_hit_key(kind, h.meta) for h in hits]
        ok = await flt.allowed_keys(k for k in keys if k is not None)
        return [
            None if k in ok else flt.key_reason(k) if k is not None else UNSUPPORTED for k in keys
        ]

    return keyed


async def keep_allowed(
    flt: DocFilter, keys: list[K], trace: Trace, *, kind: str, route: str
) -> list[K]:
    """``keys`` (in order) less those the filter does not allow, each traced at stage ``filter``."""
    if not flt.is_active:
        return list(keys)
    ok = await flt.allowed_keys(keys)
    if trace.enabled:
        for key in keys:
            if key not in ok:
                label = relation_id(*key) if isinstance(key, tuple) else key
                trace.drop("filter", kind, label, flt.key_reason(key), route=route)
    return [k for k in keys if k in ok]
