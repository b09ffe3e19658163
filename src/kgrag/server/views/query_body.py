"""The body of ``/query``, ``/query/stream`` and ``/query/data``, and its QueryParam.

LightRAG's fields, with its limits (query 64 Ki characters, top_k at most
1000, token budgets at most 1 M, 128 history messages of at most 32 Ki
characters), and kgrag's: ``filters`` (``doc_ids``, ``path_glob``,
``where``), ``conditions``, ``keep_conflicting``, the path search limits,
``cosine_threshold``, ``related_chunk_number`` and modes ``ppr``, ``path``
and ``auto``. A field left out (or null) keeps the index's default.
``include_references`` defaults to true, as in LightRAG's server.
``disable_user_prompt_prefix`` and ``include_progress`` are accepted and
change nothing (kgrag adds no prompt prefix and streams no progress events).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

MAX_QUERY_CHARS = 65_536
MAX_MESSAGE_CHARS = 32_768
MAX_MESSAGES = 128
MAX_TOP_K = 1000
MAX_TOKENS = 1_000_000
MAX_KEYWORDS = 64

# Body fields that are QueryParam fields of the same name.
PARAM_FIELDS = frozenset(
    {
        "mode",
        "only_need_context",
        "only_need_prompt",
        "response_type",
        "top_k",
        "chunk_top_k",
        "max_entity_tokens",
        "max_relation_tokens",
        "max_total_tokens",
        "hl_keywords",
        "ll_keywords",
        "conversation_history",
        "user_prompt",
        "enable_rerank",
        "include_references",
        "cosine_threshold",
        "related_chunk_number",
        "conditions",
        "keep_conflicting",
        "path_max_hops",
        "path_max_paths",
        "path_max_expanded",
        "path_deadline_ms",
    }
)
# QueryParam fields filled otherwise: ``filters`` holds the first three; streams choose ``stream``.
FILTER_FIELDS = frozenset({"doc_ids", "path_glob", "where"})
ROUTE_FIELDS = frozenset({"stream"})


class QueryFilters(BaseModel):
    """Which documents retrieval may use: ids, path globs, metadata pairs (all must hold)."""

    doc_ids: list[str] | None = Field(None, max_length=10_000)
    path_glob: list[str] | None = Field(None, max_length=1000)
    where: dict[str, str] | None = None


class QueryBody(BaseModel):
    """LightRAG's query request body, and kgrag's additions."""

    query: str = Field(max_length=MAX_QUERY_CHARS)
    mode: str = Field("mix", max_length=32)
    only_need_context: bool | None = None
    only_need_prompt: bool | None = None
    response_type: str | None = Field(None, min_length=1, max_length=256)
    top_k: int | None = Field(None, ge=1, le=MAX_TOP_K)
    chunk_top_k: int | None = Field(None, ge=1, le=MAX_TOP_K)
    max_entity_tokens: int | None = Field(None, ge=1, le=MAX_TOKENS)
    max_relation_tokens: int | None = Field(None, ge=1, le=MAX_TOKENS)
    max_total_tokens: int | None = Field(None, ge=1, le=MAX_TOKENS)
    hl_keywords: list[str] = Field(default_factory=list, max_length=MAX_KEYWORDS)
    ll_keywords: list[str] = Field(default_factory=list, max_length=MAX_KEYWORDS)
    conversation_history: list[dict[str, Any]] | None = Field(None, max_length=MAX_MESSAGES)
    user_prompt: str | None = Field(None, max_length=MAX_QUERY_CHARS)
    disable_user_prompt_prefix: bool | None = None
    enable_rerank: bool | None = None
    include_references: bool = True
    include_chunk_content: bool = False
    include_progress: bool = False
    stream: bool | None = None
    filters: QueryFilters | None = None
    conditions: Literal["rules", "llm", "off"] | None = None
    keep_conflicting: bool | None = None
    cosine_threshold: float | None = Field(None, ge=-1.0, le=1.0)
    related_chunk_number: int | None = Field(None, ge=0, le=MAX_TOP_K)
    path_max_hops: int | None = Field(None, ge=1, le=4)
    path_max_paths: int | None = Field(None, ge=0, le=1000)
    path_max_expanded: int | None = Field(None, ge=1, le=1_000_000)
    path_deadline_ms: float | None = Field(None, gt=0, le=60_000)

    @field_validator("query")
    @classmethod
    def _not_empty(cls, query: str) -> str:
        if not query.strip():
            raise ValueError("the query is empty")
        return query.strip()

    @field_validator("conversation_history")
    @classmethod
    def _history(cls, turns: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        for turn in turns or []:
            role, content = turn.get("role"), turn.get("content")
            if not isinstance(role, str) or not role.strip() or len(role) > 64:
                raise ValueError("each message needs a 'role': a short non-empty string")
            if not isinstance(content, str) or len(content) > MAX_MESSAGE_CHARS:
                raise ValueError(
                    f"each message needs a 'content' string of at most {MAX_MESSAGE_CHARS} characters"
                )
        return turns

    def overrides(self) -> dict[str, Any]:
        """The QueryParam fields this body sets (the index's defaults fill the rest)."""
        values = self.model_dump(include=set(PARAM_FIELDS), exclude_none=True)
        if self.filters is not None:
            values.update(self.filters.model_dump(exclude_none=True))
        values["stream"] = False
        return values


class QueryDataBody(QueryBody):
    """``/query/data``: the query body, and ``trace`` (every stage's drops)."""

    trace: bool = False
