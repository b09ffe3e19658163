"""kgrag: graph-based retrieval-augmented generation.

The public surface (pinned by ``tests/test_public_api.py``)::

    from kgrag import KGRag, SyncKGRag, Settings, QueryParam, QueryResult
    from kgrag import adapt_chat, adapt_embedding, adapt_rerank, Limits  # bring your own

``print(await rag.query(q))`` prints the answer; ``rag.stream(q)`` yields
it in pieces (an :class:`AnswerStream`).
"""

from kgrag.api.blocking import SyncAnswerStream, SyncKGRag
from kgrag.api.facade import KGRag
from kgrag.config.settings import Settings
from kgrag.errors import (
    ConfigError,
    CurationError,
    DocumentNotFoundError,
    EntityNotFoundError,
    ExtractionError,
    KGRagError,
    LeaseLostError,
    LoaderError,
    MergeNotFoundError,
    ModelError,
    NoIndexError,
    NotOpenError,
    QueryError,
    SettingsError,
    StorageError,
    StoreCorruptError,
    UnknownBackendError,
    WorkdirBusyError,
)
from kgrag.indexing.report import IndexReport
from kgrag.indexing.worker import WorkerOptions, WorkerReport
from kgrag.llm.adapters import adapt_chat, adapt_embedding, adapt_rerank
from kgrag.llm.limiter import Limits
from kgrag.retrieval.answer.stream import AnswerStream
from kgrag.retrieval.param import QueryParam, QueryResult
from kgrag.types import DocStatus, Document

__version__ = "0.1.0"

__all__ = [
    "AnswerStream",
    "ConfigError",
    "CurationError",
    "DocStatus",
    "Document",
    "DocumentNotFoundError",
    "EntityNotFoundError",
    "ExtractionError",
    "IndexReport",
    "KGRag",
    "KGRagError",
    "LeaseLostError",
    "Limits",
    "LoaderError",
    "MergeNotFoundError",
    "ModelError",
    "NoIndexError",
    "NotOpenError",
    "QueryError",
    "QueryParam",
    "QueryResult",
    "Settings",
    "SettingsError",
    "StorageError",
    "StoreCorruptError",
    "SyncAnswerStream",
    "SyncKGRag",
    "UnknownBackendError",
    "WorkdirBusyError",
    "WorkerOptions",
    "WorkerReport",
    "adapt_chat",
    "adapt_embedding",
    "adapt_rerank",
]
