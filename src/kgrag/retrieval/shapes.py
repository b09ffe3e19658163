"""The JSON shapes retrieval hands out: ``query_data``'s items, references, conditions and trace.

Field names and their order are the contract (``kgrag query --json``, the
server's ``/query/data``, saved evaluation runs): the builders fill them in
the order written here. Values typed ``object`` are JSON the caller chose
(document metadata, a chunk's location, trace parameters).
"""

# no ``from __future__ import annotations``: TypedDict reads NotRequired from evaluated annotations
from typing import Literal, NotRequired, TypedDict

Kind = Literal["entity", "relation", "chunk"]
Location = dict[str, object]  # a chunk's section, pages and offsets (kgrag.ingest.block_chunker)


class ReferenceData(TypedDict):
    """:meth:`kgrag.retrieval.reference.Reference.to_dict`."""

    reference_id: str
    kind: Kind
    name: str
    chunk_id: str
    doc_id: str
    file_path: str
    pages: list[int] | None
    section: list[str]
    start: int | None
    end: int | None
    text: str
    chunks: list[int]
    sources: list[str]
    cited: bool
    location: NotRequired[str]


class EntityData(TypedDict):
    entity_name: str
    entity_type: str
    description: str
    source_ids: list[str]
    file_paths: list[str]
    degree: int
    score: float | None
    route: str


class RelationData(TypedDict):
    src_id: str
    tgt_id: str
    keywords: str
    description: str
    weight: float
    source_ids: list[str]
    file_paths: list[str]
    degree: int
    score: float | None
    route: str


class ChunkData(TypedDict):
    chunk_id: str
    content: str
    file_path: str
    doc_id: str
    reference_id: str
    score: float | None
    route: str
    location: Location


class PathData(TypedDict):
    nodes: list[str]
    chain: str
    hops: int
    score: float
    open: bool
    relations: list[list[str]]
    route: str


class KeywordsData(TypedDict):
    high_level: list[str]
    low_level: list[str]
    source: str
    error: NotRequired[str]


class FilterSpecData(TypedDict):
    doc_ids: list[str]
    path_glob: list[str]
    where: dict[str, str]


class FilterData(TypedDict):
    """:meth:`kgrag.retrieval.filter.documents.DocFilter.describe`."""

    active: bool
    doc_ids: list[str]
    path_glob: list[str]
    where: dict[str, str]
    documents: int | None
    disabled: list[str]
    excluded: NotRequired[dict[str, str]]


class ConstraintData(TypedDict):
    kind: str
    value: str
    normalized: str
    span: list[int] | None
    exclusive: bool


class CoverageData(TypedDict):
    constraint: ConstraintData
    status: str
    items: list[str]
    conflicting: list[str]
    unknown: list[str]


class JudgementData(TypedDict):
    kind: str
    id: str
    verdict: str
    reasons: list[str]


class ConditionsData(TypedDict):
    """``query_data()["conditions"]``."""

    source: str
    error: str | None
    keep_conflicting: bool
    constraints: list[ConstraintData]
    coverage: list[CoverageData]
    judgements: list[JudgementData]
    dropped: list[str]
    note: str


class ConditionsTrace(TypedDict):
    """The trace's ``conditions``: what the question asked, and from where."""

    source: str
    constraints: list[ConstraintData]
    error: str | None


# -- the trace ---------------------------------------------------------------------------
TraceItem = dict[str, object]  # ``id`` and ``score``, and what the route adds (degree, rank...)


class TraceRoute(TypedDict):
    route: str
    kind: str
    query: str
    items: list[TraceItem]


class TraceDrop(TypedDict):
    stage: str
    kind: str
    id: str
    reason: str
    score: NotRequired[float]
    route: NotRequired[str]
    file: NotRequired[str]


class TraceNote(TypedDict):
    stage: str
    message: str


class TraceData(TypedDict, total=False):
    """:meth:`kgrag.retrieval.trace.Trace.to_dict`: the facts set, then routes, drops and notes."""

    question: str
    mode: str
    params: dict[str, object]
    keywords: KeywordsData
    filter: FilterData
    conditions: ConditionsTrace
    final: dict[str, object]
    auto: dict[str, object]
    routes: list[TraceRoute]
    dropped: list[TraceDrop]
    notes: list[TraceNote]


class QueryData(TypedDict):
    """:meth:`kgrag.retrieval.engine.QueryEngine.query_data`: everything retrieval produced."""

    status: str
    question: str
    mode: str
    keywords: KeywordsData
    entities: list[EntityData]
    relations: list[RelationData]
    paths: list[PathData]
    chunks: list[ChunkData]
    references: list[ReferenceData]
    tokens: dict[str, int]
    truncated: dict[str, int]
    context_chars: int
    reranked: bool
    filter: FilterData | None
    conditions: ConditionsData
    retrieval_note: str | None
    trace: NotRequired[TraceData]
