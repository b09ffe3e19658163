"""The extractor seam: what the indexer asks of an entity/relation extractor.

Two implementations ship (:class:`~kgrag.extract.llm_extractor.LLMExtractor`
and :class:`~kgrag.extract.nlp.NLPExtractor`); the indexer depends only on
this Protocol, so either (or a user's own) plugs in without the pipeline
importing a model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from kgrag.types import Chunk, Extraction


class Extractor(Protocol):
    """Turns one chunk into the entities and relations it states."""

    async def extract(self, chunk: Chunk) -> Extraction:
        """The chunk's facts.

        A reply that stays unusable is reported in ``Extraction.error`` (the
        chunk becomes a warning on its document); raising fails the document.
        """
        ...
