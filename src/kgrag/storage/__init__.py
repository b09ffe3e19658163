"""Storage: protocols for the four roles and the backends that implement them."""

from kgrag.storage.base import (
    DocStatusStore,
    GraphStore,
    KVStore,
    LexicalIndex,
    Storage,
    VectorHit,
    VectorStore,
    edge_key,
)
from kgrag.storage.registry import STORAGES, open_storage

__all__ = [
    "STORAGES",
    "DocStatusStore",
    "GraphStore",
    "KVStore",
    "LexicalIndex",
    "Storage",
    "VectorHit",
    "VectorStore",
    "edge_key",
    "open_storage",
]
