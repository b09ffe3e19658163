"""Query parameters and results.

:class:`QueryParam` carries LightRAG's query fields with the same defaults;
:meth:`QueryParam.from_settings` takes the defaults from :class:`Settings`
instead. :class:`QueryResult` is what :meth:`QueryEngine.query` returns
(:meth:`QueryEngine.stream` yields the answer in pieces instead).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from kgrag.errors import QueryError
from kgrag.llm.ledger import QueryCost
from kgrag.retrieval.reference import Reference
from kgrag.retrieval.shapes import CoverageData, ReferenceData

if TYPE_CHECKING:
    from kgrag.config.settings import Settings
    from kgrag.llm.base import ChatMessage

# The modes the built-in registry knows ("ppr" is registered by its own module).
Mode = Literal["naive", "local", "global", "hybrid", "mix", "bypass", "ppr", "path"]

# The longest path the path search looks for (see docs/path.md).
MAX_PATH_HOPS = 4

_SETTINGS_FIELDS = (
    "top_k",
    "chunk_top_k",
    "max_entity_tokens",
    "max_relation_tokens",
    "max_total_tokens",
    "cosine_threshold",
    "related_chunk_number",
)


@dataclass(slots=True)
class QueryParam:
    """How one question is answered.

    ``hl_keywords`` / ``ll_keywords`` given by the caller skip the keywords
    call. ``conversation_history`` is shown to the model only (it does not
    steer retrieval) and turns the answer cache off. ``enable_rerank`` is
    silently ignored when no reranker is configured. ``include_references``
    fills :attr:`QueryResult.references` (the numbered source files the
    answer cites as [n]); :meth:`QueryEngine.query_data` always has them.

    ``doc_ids``, ``path_glob`` and ``where`` restrict retrieval to some
    documents (see :mod:`kgrag.retrieval.filter.documents`): ids (or sources) of
    documents; fnmatch globs against a document's source and file path;
    metadata pairs that must all be equal (compared as strings). The kinds
    combine with AND, the entries of one list with OR. Disabled documents
    are never retrieved, filter or not.

    ``conditions`` picks how the question's constraints (model numbers,
    versions, years...) are read: ``rules`` (the default), ``llm`` (the chat
    model, rules when there is none or it fails) or ``off``. Items that
    conflict with them leave the context unless ``keep_conflicting`` is set
    (see docs/conditions.md).

    ``path_max_hops`` (1 to 4), ``path_max_paths``, ``path_max_expanded``
    (node expansions) and ``path_deadline_ms`` bound the path search of
    modes ``path`` and ``mix`` (see docs/path.md).

    ``stream`` is LightRAG's field, kept so its parameters carry over:
    :meth:`kgrag.KGRag.query` refuses it, :meth:`kgrag.KGRag.stream` streams.
    """

    mode: str = "mix"
    only_need_context: bool = False
    only_need_prompt: bool = False
    response_type: str = "Multiple Paragraphs"
    stream: bool = False
    top_k: int = 40
    chunk_top_k: int = 20
    max_entity_tokens: int = 6000
    max_relation_tokens: int = 8000
    max_total_tokens: int = 30000
    hl_keywords: list[str] = field(default_factory=list)
    ll_keywords: list[str] = field(default_factory=list)
    conversation_history: list[ChatMessage] = field(default_factory=list)
    user_prompt: str | None = None
    enable_rerank: bool = True
    include_references: bool = False
    cosine_threshold: float = 0.2
    related_chunk_number: int = 5
    doc_ids: list[str] | None = None
    path_glob: list[str] | None = None
    where: dict[str, str] | None = None
    path_max_hops: int = 3
    path_max_paths: int = 10
    path_max_expanded: int = 2000
    path_deadline_ms: float = 250.0
    conditions: str = "rules"
    keep_conflicting: bool = False

    @classmethod
    def from_settings(cls, settings: Settings | None, **overrides: Any) -> QueryParam:
        """Defaults from ``settings`` (a :class:`kgrag.config.settings.Settings`), then ``overrides``."""
        values = {
            name: getattr(settings.query, name) for name in _SETTINGS_FIELDS if settings is not None
        }
        values.update(overrides)
        return cls(**values)

    def replace(self, **changes: Any) -> QueryParam:
        """A copy with ``changes`` applied."""
        return dataclasses.replace(self, **changes)

    def validate(self) -> None:
        """Raise :class:`QueryError` for values no query can run with."""
        for name in ("top_k", "chunk_top_k", "related_chunk_number"):
            if getattr(self, name) < 0:
                raise QueryError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("max_entity_tokens", "max_relation_tokens", "max_total_tokens"):
            if getattr(self, name) < 0:
                raise QueryError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not -1.0 <= self.cosine_threshold <= 1.0:
            raise QueryError(f"cosine_threshold must lie in [-1, 1], got {self.cosine_threshold}")
        for name in ("doc_ids", "path_glob"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, (list, tuple, str)):
                raise QueryError(f"{name} must be a list of strings, got {type(value).__name__}")
        if self.where is not None and not isinstance(self.where, dict):
            raise QueryError(
                f"where must be a dict of metadata pairs, got {type(self.where).__name__}"
            )
        if self.conditions not in ("rules", "llm", "off"):
            raise QueryError(f"conditions must be rules, llm or off, got {self.conditions!r}")
        for turn in self.conversation_history:
            if not isinstance(turn, dict) or "role" not in turn or "content" not in turn:
                raise QueryError(
                    "conversation_history items must be {'role': ..., 'content': ...} dicts"
                )
        self._validate_path_limits()

    def _validate_path_limits(self) -> None:
        if not 1 <= self.path_max_hops <= MAX_PATH_HOPS:
            raise QueryError(
                f"path_max_hops must lie in [1, {MAX_PATH_HOPS}], got {self.path_max_hops}"
            )
        if self.path_max_paths < 0:
            raise QueryError(f"path_max_paths must be >= 0, got {self.path_max_paths}")
        if self.path_max_expanded < 1:
            raise QueryError(f"path_max_expanded must be >= 1, got {self.path_max_expanded}")
        if not self.path_deadline_ms > 0:
            raise QueryError(f"path_deadline_ms must be > 0, got {self.path_deadline_ms}")


@dataclass(slots=True)
class QueryResult:
    """The outcome of one query; ``str(result)`` (and ``print(result)``) is its :attr:`text`.

    ``kind`` says what was asked for: ``answer`` (the default), ``context``
    (``only_need_context``) or ``prompt`` (``only_need_prompt``); ``text``
    returns that. ``extractive`` is true when the answer was assembled from
    the best supporting sentences instead of written by a chat model: none
    is configured, or it failed, and then ``fallback_reason`` says why.
    ``retrieval_note`` says why only the lexical (BM25) index was searched:
    the embedding service failed (see ``Settings.query_embed_timeout``).

    ``references`` (with ``include_references``) has one dict per reference
    number of the context: document, file, pages, section, span and whether
    the answer cites it (:attr:`reference_records` gives them typed);
    ``invalid_citations`` the numbers the model cited that point at no
    context item, removed from :attr:`answer` (see docs/citations.md).

    ``coverage`` lists each constraint of the question with its status
    (covered, missing, conflicting-only) and the items bearing on it
    (see docs/conditions.md).
    """

    kind: Literal["answer", "context", "prompt"]
    mode: str
    answer: str = ""
    context: str = ""
    prompt: str = ""
    references: list[ReferenceData] = field(default_factory=list)  # Reference.to_dict() each
    keywords: Mapping[str, object] = field(default_factory=dict)  # KeywordsData once retrieved
    cached: bool = False
    extractive: bool = False
    no_context: bool = False
    tokens: dict[str, int] = field(default_factory=dict)
    fallback_reason: str | None = None
    retrieval_note: str | None = None  # why retrieval was narrowed (the embedder failed)
    coverage: list[CoverageData] = field(default_factory=list)  # per constraint: status, items
    invalid_citations: list[int] = field(default_factory=list)  # removed from the answer
    cost: QueryCost = field(default_factory=QueryCost)  # this query's model calls and USD

    @property
    def reference_records(self) -> list[Reference]:
        """:attr:`references` as typed records."""
        return [Reference.from_dict(r) for r in self.references]

    @property
    def text(self) -> str:
        """The answer, the context or the prompt, whichever was asked for."""
        return {"answer": self.answer, "context": self.context, "prompt": self.prompt}[self.kind]

    def __str__(self) -> str:
        return self.text
