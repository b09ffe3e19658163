"""The curation replay: recompute every key a curation record names, after a rebuild.

A rebuild re-indexes the documents, whose commits already plan through the
records (aliases, overrides, tombstones); the replay adds what no document
touches (manual entities and relations). ``kgrag rebuild``
(:func:`kgrag.maintenance.rebuild.replay_curation`) and
:meth:`kgrag.curation.ops.Curator.replay` both run this one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgrag.indexing.changes import Change

if TYPE_CHECKING:
    from kgrag.indexing.changes import ChangeApplier


async def replay_curation(applier: ChangeApplier) -> int:
    """Recompute every name the current records mention; returns how many."""
    names = sorted((await applier.curation.current()).curated_names())
    if names:
        await applier.apply(Change(recompute=names))
        await applier.finish()
    return len(names)
