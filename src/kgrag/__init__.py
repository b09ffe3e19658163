"""kgrag: graph-based retrieval-augmented generation.

The public surface (pinned by ``tests/test_public_api.py``)::

    from kgrag import KGRag, SyncKGRag, Settings, QueryParam, QueryResult
    from kgrag import adapt_chat, adapt_embedding, adapt_rerank, Limits  # bring your own

``print(await rag.query(q))`` prints the answer; ``rag.stream(q)`` yields
it in pieces (an :class:`AnswerStream`).
"""

from kgrag.api import KGRag
from kgrag.config import Settings
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
from kgrag.llm.adapters import adapt_chat, adapt_embedding, adapt_rerank
from kgrag.llm.limiter import Limits
from kgrag.pipeline.report import IndexReport
from kgrag.pipeline.worker import WorkerOptions, WorkerReport
from kgrag.query.answer.stream import AnswerStream
from kgrag.query.param import QueryParam, QueryResult
from kgrag.sync import SyncAnswerStream, SyncKGRag
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
