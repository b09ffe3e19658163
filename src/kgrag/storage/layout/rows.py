"""The rows kept in each namespace, as the JSON objects stored (field names are the contract).

Rows written before a field existed lack it: those fields are ``NotRequired``
and their readers give a default. Values of ``Any`` are JSON the row's own
module defines (a location, evidence, a job's result).
"""

# no ``from __future__ import annotations``: TypedDict reads NotRequired from evaluated annotations
from typing import Any, NotRequired, TypedDict

# -- documents and chunks ---------------------------------------------------------------


class GivenChunkRow(TypedDict):
    """One chunk an imported document arrived with (``full_docs`` field ``chunks``)."""

    content: str
    tokens: int
    location: dict[str, Any]


class BlocksRow(TypedDict):
    """A document's structure in compact form (:func:`kgrag.ingest.blocks.encode_blocks`)."""

    v: int
    sections: list[list[str]]
    blocks: list[list[Any]]  # [kind code, start, end, level, section index, page, lang?]


class FullDocRow(TypedDict):
    """``full_docs``: a document's text as loaded."""

    content: str
    file_path: str
    source: str | None
    blocks: NotRequired[BlocksRow]  # structure-aware ingest only
    chunks: NotRequired[list[GivenChunkRow]]  # imported documents only, in order


class ChunkRow(TypedDict):
    """``text_chunks``: a live chunk's text, and where its canonical owner has it."""

    content: str
    tokens: int
    doc_id: str  # the canonical owner: smallest (sort key, position, doc id)
    order: int  # the chunk's position in that document
    file_path: str
    doc_ids: NotRequired[list[str]]  # every live document containing the chunk
    location: NotRequired[dict[str, Any]]  # section, page, lines (kgrag.ingest.blocks)


class FactsRow(TypedDict):
    """``chunk_facts``: a chunk's extraction and its owners (:class:`~kgrag.indexing.facts.StoredChunk`)."""

    extractor: str  # llm, nlp, import
    entities: list[list[str]]  # [name, type, description]
    relations: list[list[Any]]  # [source, target, keywords, description, weight]
    warnings: list[str]
    error: str | None
    owners: dict[str, list[Any]]  # doc id -> [sort key, position, file path, location]


class SupportRow(TypedDict):
    """``graph_support``: the sorted ids of the live chunks supporting one key (uncapped)."""

    chunks: list[str]


class DocGraphRow(TypedDict):
    """``doc_graph``: the chunk ids of a document's committed version."""

    chunks: list[str]


# -- models and costs -----------------------------------------------------------------


class CacheRow(TypedDict):
    """``llm_cache``: one chat answer."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    role: str
    tag: NotRequired[str]  # the chunk it was asked for (purged with it)


class CostRow(TypedDict):
    """``cost_ledger``: the counts of one (day, operation, document, model, role)."""

    day: str
    operation: str
    document: str
    model: str
    role: str
    calls: int
    cache_hits: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    errors: int


Costs = dict[str, dict[str, float]]  # meta ``ledger``: {role: {field: value}}

# -- curation -----------------------------------------------------------------------------


class AliasRow(TypedDict):
    """``entity_aliases``: where an alias name points, and the merge that made it."""

    target: str
    merge: str


class MergeRow(TypedDict):
    """``entity_merges``: one merge, until it is undone."""

    target: str
    sources: list[str]
    origin: str
    evidence: dict[str, Any]
    created_at: float


class SplitRow(TypedDict):
    """``entity_splits``: a homonym separated by chunk."""

    name: str
    parts: dict[str, list[str]]  # new name -> chunk ids
    created_at: float


class EditRow(TypedDict, total=False):
    """``manual_edits``: a manual fact, field overrides, or a tombstone."""

    create: dict[str, Any]
    set: dict[str, Any]
    deleted: bool


# -- the walk graph ------------------------------------------------------------------------


class WalkHeadRow(TypedDict):
    """``walk_graph`` key ``head``."""

    format: int
    version: int
    entities: int  # entity count of the snapshot
    pending: int  # names and chunks logged since


class WalkSnapshotRow(TypedDict):
    """``walk_graph`` key ``snapshot`` (:mod:`kgrag.knowledge.walk.codec`)."""

    format: int
    version: int
    entities: list[str]
    chunks: list[str]
    keys: list[str]
    alt: list[str]
    ec: str  # base64 of little-endian arrays
    sim: str
    ee: str
    weight: str


class WalkLogRow(TypedDict):
    """``walk_log``: the names and chunks one commit touched."""

    names: list[str]
    chunks: list[str]


# -- the server ----------------------------------------------------------------------------


class JobFields(TypedDict):
    """A server job as ``GET /jobs/{id}`` shows it (its stored row less ``seen_at``)."""

    job_id: str
    kind: str
    title: str
    status: str
    track_id: str | None
    created_at: float
    started_at: float | None
    finished_at: float | None
    progress: dict[str, int]
    result: dict[str, object] | None
    error: str | None


class JobRow(JobFields):
    """``server_jobs``: a job's fields, and when it was last written."""

    seen_at: float


class RefusalRow(TypedDict):
    """``server_refused``: an input refused at upload or by the loader (kgrag.indexing.rejected)."""

    doc_id: str
    file_path: str
    reason: str
    track_id: str | None
    created_at: float
    path: NotRequired[str]  # a file on disk (absolute, escaped); absent: never kept


class PlannedRow(TypedDict):
    doc_id: str
    file_path: str
    metadata: dict[str, Any]


class TrackRow(TypedDict):
    """``server_tracks``: the documents one request asked for, and why some were refused."""

    track_id: str
    docs: list[PlannedRow]
    errors: dict[str, str]  # doc id -> reason
    created_at: float
    job_id: str | None


class LoginFailuresRow(TypedDict):
    """``server_login_failures``: the times of recent failed logins."""

    times: list[float]


# -- vector metadata and the graph ----------------------------------------------------------


class EntityVectorMeta(TypedDict):
    name: str


class RelationVectorMeta(TypedDict):
    src: str
    tgt: str


class ChunkVectorMeta(TypedDict):
    doc_id: str | None
    file_path: str | None


class NodeRow(TypedDict, total=False):
    """A graph node (:mod:`kgrag.knowledge.merge`); fields it does not manage are kept."""

    entity_type: str
    type_counts: dict[str, int]
    description: str  # fragments joined by <SEP>, or their summary
    source_ids: list[str]  # capped
    file_paths: list[str]  # capped
    extractor: str
    created_at: float
    fragments_digest: str  # the fragments the summary was made from
    aliases: list[str]  # names merged into it


class EdgeRow(TypedDict, total=False):
    """A graph edge, keyed by the sorted name pair."""

    src: str
    tgt: str
    weight: float
    keywords: str
    description: str
    directions: list[list[str]]  # the [source, target] orders it was stated in
    source_ids: list[str]
    file_paths: list[str]
    extractor: str
    created_at: float
    fragments_digest: str
