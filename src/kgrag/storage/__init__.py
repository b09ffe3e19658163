"""Storage: protocols for the four roles, declared capabilities, and the backends."""

from kgrag.storage.base import (
    Capability,
    DocStatusStore,
    GraphStore,
    KVStore,
    LexicalIndex,
    Storage,
    VectorHit,
    VectorStore,
    edge_key,
)
from kgrag.storage.capabilities import feature, supports
from kgrag.storage.registry import STORAGES, open_storage

__all__ = [
    "STORAGES",
    "Capability",
    "DocStatusStore",
    "GraphStore",
    "KVStore",
    "LexicalIndex",
    "Storage",
    "VectorHit",
    "VectorStore",
    "edge_key",
    "feature",
    "open_storage",
    "supports",
]
