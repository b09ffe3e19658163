"""Everything an index stores: its namespaces, meta keys, key formats and row types.

This package is the one place that spells a stored name. A backend
(:mod:`kgrag.storage.base`) offers four roles; what kgrag keeps in each:

Key-value namespaces (rows are JSON objects, typed in :mod:`.rows`):

==================  ===============================  ==============================
namespace           key                              row
==================  ===============================  ==============================
``full_docs``       document id                      :class:`~.rows.FullDocRow`
``text_chunks``     chunk id                         :class:`~.rows.ChunkRow`
``chunk_facts``     chunk id                         :class:`~.rows.FactsRow`
``graph_support``   :func:`support_key`              :class:`~.rows.SupportRow`
``doc_graph``       document id                      :class:`~.rows.DocGraphRow`
``summary_pending`` :func:`support_key`              ``{}``
``llm_cache``       sha256 of the request            :class:`~.rows.CacheRow`
``cost_ledger``     :func:`cost_row_key`             :class:`~.rows.CostRow`
``entity_aliases``  alias name                       :class:`~.rows.AliasRow`
``entity_merges``   merge id                         :class:`~.rows.MergeRow`
``entity_splits``   split id                         :class:`~.rows.SplitRow`
``manual_edits``    :func:`support_key`              :class:`~.rows.EditRow`
``walk_graph``      ``snapshot``, ``head``           :class:`~.rows.WalkSnapshotRow`,
                                                     :class:`~.rows.WalkHeadRow`
``walk_log``        :func:`walk_log_key`             :class:`~.rows.WalkLogRow`
``server_jobs``     job id                           :class:`~.rows.JobRow`
``server_refused``  document id                      :class:`~.rows.RefusalRow`
``server_tracks``   track id                         :class:`~.rows.TrackRow`
``server_login_…``  sha256 of address and user       :class:`~.rows.LoginFailuresRow`
==================  ===============================  ==============================

Vector namespaces ``entities`` (id ``ent-`` + md5 of the name), ``relations``
(``rel-`` + md5 of the sorted pair joined by :data:`PAIR_SEP`) and ``chunks``
(the chunk id), with the metadata of :mod:`.rows` (ids are made by
:mod:`kgrag.ingest.ids`: ``doc-``/``chunk-`` + md5 of the source or text).
The graph keeps nodes by entity name and edges by the sorted name pair
(:class:`~.rows.NodeRow`, :class:`~.rows.EdgeRow`); the document status table
keeps :class:`~kgrag.types.DocRecord`. The meta table holds the values named
``*_META`` below. docs/data-model.md describes the same in prose.

Renaming any name or field here changes what saved indexes hold: never do it
without a migration.
"""

from __future__ import annotations

from kgrag.storage.layout.keys import (
    PAIR_SEP,
    WALK_HEAD_KEY,
    WALK_SNAPSHOT_KEY,
    Pair,
    cost_row_key,
    parse_support_key,
    support_key,
    walk_log_key,
)

# -- key-value namespaces --------------------------------------------------------------
FULL_DOCS = "full_docs"  # a document's text, path, source and blocks
CHUNKS = "text_chunks"  # a live chunk's text and its canonical owner
FACTS = "chunk_facts"  # a live chunk's extraction and every document owning it
SUPPORT = "graph_support"  # the live chunks supporting each entity and relation
DOC_GRAPH = "doc_graph"  # the chunks of each document's committed version
PENDING = "summary_pending"  # keys whose description waits for its summary
LLM_CACHE = "llm_cache"  # chat answers (kgrag.llm.cache)
COST_LEDGER = "cost_ledger"  # costs per day, operation, document, model and role
ALIASES = "entity_aliases"  # curation: alias -> canonical name
MERGES = "entity_merges"  # curation: every merge, until undone
SPLITS = "entity_splits"  # curation: homonyms separated by chunk
EDITS = "manual_edits"  # curation: manual facts, overrides and tombstones
WALK = "walk_graph"  # the PPR walk graph's snapshot and head
WALK_LOG = "walk_log"  # what each commit since the snapshot touched
SERVER_JOBS = "server_jobs"  # the server's job records
SERVER_REFUSED = "server_refused"  # every refused input (status, server listing)
SERVER_TRACKS = "server_tracks"  # the documents of one upload, insert or scan
LOGIN_FAILURES = "server_login_failures"  # failed logins, for the throttle

KV_NAMESPACES = (
    *(FULL_DOCS, CHUNKS, FACTS, SUPPORT, DOC_GRAPH, PENDING, LLM_CACHE, COST_LEDGER),
    *(ALIASES, MERGES, SPLITS, EDITS, WALK, WALK_LOG),
    *(SERVER_JOBS, SERVER_REFUSED, SERVER_TRACKS, LOGIN_FAILURES),
)
CURATION_NAMESPACES = (ALIASES, MERGES, EDITS, SPLITS)

# -- vector namespaces -------------------------------------------------------------------
ENTITY_VECTORS = "entities"
RELATION_VECTORS = "relations"
CHUNK_VECTORS = "chunks"
VECTOR_NAMESPACES = (ENTITY_VECTORS, RELATION_VECTORS, CHUNK_VECTORS)

# -- meta keys -----------------------------------------------------------------------------
SETTINGS_META = "settings"  # the settings the index was built with (indexing.manifest)
EMBEDDING_IDENTITY_META = "embedding_identity"  # "provider:model" (indexes before settings)
EXTRACTORS_META = "extractors"  # sorted names of the extractors that built the graph
GRAPH_VERSION_META = "graph_version"  # bumped by every commit
CURATION_VERSION_META = "curation_version"  # bumped by every curation write
LEDGER_META = "ledger"  # all-time costs, {role: {field: value}}
REJECTED_META = "rejected_inputs"  # older indexes: {path: reason}, folded into SERVER_REFUSED
MIGRATION_META = "migration"  # a migration target's progress record
# kept by the backends for themselves (never copied by a migration)
SCHEMA_VERSION_META = "schema_version"
MAX_SEQ_META = "doc_status.max_seq"  # the SQLite document table's high-water mark

META_KEYS = (
    *(SETTINGS_META, EMBEDDING_IDENTITY_META, EXTRACTORS_META, GRAPH_VERSION_META),
    *(CURATION_VERSION_META, LEDGER_META, REJECTED_META, MIGRATION_META),
    *(SCHEMA_VERSION_META, MAX_SEQ_META),
)

__all__ = [
    "ALIASES",
    "CHUNKS",
    "CHUNK_VECTORS",
    "COST_LEDGER",
    "CURATION_NAMESPACES",
    "CURATION_VERSION_META",
    "DOC_GRAPH",
    "EDITS",
    "EMBEDDING_IDENTITY_META",
    "ENTITY_VECTORS",
    "EXTRACTORS_META",
    "FACTS",
    "FULL_DOCS",
    "GRAPH_VERSION_META",
    "KV_NAMESPACES",
    "LEDGER_META",
    "LLM_CACHE",
    "LOGIN_FAILURES",
    "MAX_SEQ_META",
    "MERGES",
    "META_KEYS",
    "MIGRATION_META",
    "PAIR_SEP",
    "PENDING",
    "REJECTED_META",
    "RELATION_VECTORS",
    "SCHEMA_VERSION_META",
    "SERVER_JOBS",
    "SERVER_REFUSED",
    "SERVER_TRACKS",
    "SETTINGS_META",
    "SPLITS",
    "SUPPORT",
    "VECTOR_NAMESPACES",
    "WALK",
    "WALK_HEAD_KEY",
    "WALK_LOG",
    "WALK_SNAPSHOT_KEY",
    "Pair",
    "cost_row_key",
    "parse_support_key",
    "support_key",
    "walk_log_key",
]
