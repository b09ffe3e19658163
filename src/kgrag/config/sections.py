"""Every section of the settings, by the name :class:`~kgrag.config.settings.Settings` gives it.

One pydantic model per concern; the flat name of each field (the keyword,
the ``KGRAG_*`` variable) is in :mod:`kgrag.config.fields`.
"""

from __future__ import annotations

from pydantic import BaseModel

from kgrag.config.indexing import ChunkingSettings, ExtractionSettings, IndexingSettings
from kgrag.config.knowledge import MergeSettings, ResolutionSettings
from kgrag.config.loading import LoadingSettings
from kgrag.config.models import EmbeddingSettings, LLMSettings, RerankSettings
from kgrag.config.retrieval import CostSettings, QuerySettings
from kgrag.config.server import ServerSettings
from kgrag.config.store import PostgresSettings, StoreSettings

__all__ = [
    "SECTIONS",
    "ChunkingSettings",
    "CostSettings",
    "EmbeddingSettings",
    "ExtractionSettings",
    "IndexingSettings",
    "LLMSettings",
    "LoadingSettings",
    "MergeSettings",
    "PostgresSettings",
    "QuerySettings",
    "RerankSettings",
    "ResolutionSettings",
    "ServerSettings",
    "StoreSettings",
]

# section name (the attribute of Settings) -> its model, in declaration order
SECTIONS: dict[str, type[BaseModel]] = {
    "store": StoreSettings,
    "postgres": PostgresSettings,
    "llm": LLMSettings,
    "embedding": EmbeddingSettings,
    "rerank": RerankSettings,
    "loading": LoadingSettings,
    "chunking": ChunkingSettings,
    "extraction": ExtractionSettings,
    "resolution": ResolutionSettings,
    "merging": MergeSettings,
    "indexing": IndexingSettings,
    "query": QuerySettings,
    "cost": CostSettings,
    "server": ServerSettings,
}
