"""Indexing a gold set's passages into the workdir, one document per passage.

A passage's key becomes its document's ``file_path``, so every retrieved
chunk names the passage it came from. A folder corpus is indexed as
``kgrag index`` would (gold keys are then paths relative to the folder).
Passages already indexed are found unchanged and cost nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgrag.errors import ConfigError
from kgrag.evaluation.gold import GoldSet

if TYPE_CHECKING:
    from kgrag.api.facade import IndexReport, KGRag
    from kgrag.indexing.progress import ProgressSink


async def index_passages(
    rag: KGRag, gold: GoldSet, progress: ProgressSink | None = None
) -> IndexReport:
    """Index ``gold``'s passages (or corpus folder) into ``rag``."""
    if gold.corpus_dir is not None:
        return await rag.index_paths([gold.corpus_dir], progress)
    if not gold.passages:
        raise ConfigError(
            f"{gold.source}: no passages to index; give them with --passages FILE or FOLDER"
        )
    keys = list(gold.passages)
    return await rag.insert([gold.passages[k] for k in keys], keys, progress)
