"""The extractor of an index that needs a chat model this process does not have.

An index built with the LLM extractor remembers it (:mod:`kgrag.indexing.manifest`).
Opened where no chat model is configured, it can still be read, queried
extractively, checked and exported; only extracting is impossible. This
stand-in says so when (and only when) something asks it to extract.
"""

from __future__ import annotations

from kgrag.errors import ConfigError
from kgrag.types import Chunk, Extraction


class MissingChatExtractor:
    """Raises :attr:`error` on use: the LLM extractor without a chat model."""

    def __init__(self, error: ConfigError):
        self.error = error

    async def extract(self, chunk: Chunk) -> Extraction:
        raise self.error
