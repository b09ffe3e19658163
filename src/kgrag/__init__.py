"""kgrag: graph-based retrieval-augmented generation.

The public surface (pinned by ``tests/test_public_api.py``)::

    from kgrag import KGRag, SyncKGRag, Settings, QueryParam, QueryResult
"""

from kgrag.api import IndexReport, KGRag, SyncKGRag
from kgrag.config import Settings
from kgrag.errors import (
    ConfigError,
    ExtractionError,
    KGRagError,
    LoaderError,
    ModelError,
    QueryError,
    StorageError,
    StoreCorruptError,
    UnknownBackendError,
)
from kgrag.query.param import QueryParam, QueryResult
from kgrag.types import DocStatus, Document

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "DocStatus",
    "Document",
    "ExtractionError",
    "IndexReport",
    "KGRag",
    "KGRagError",
    "LoaderError",
    "ModelError",
    "QueryError",
    "QueryParam",
    "QueryResult",
    "Settings",
    "StorageError",
    "StoreCorruptError",
    "SyncKGRag",
    "UnknownBackendError",
]
