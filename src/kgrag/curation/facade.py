"""The curation methods of :class:`~kgrag.api.facade.KGRag` (a mixin).

Kept here so the façade stays one method per concern elsewhere: every
write goes through the index's one write path (``rag.indexing``, its
writer lease and :class:`~kgrag.indexing.changes.ChangeApplier`) and
delegates to :class:`~kgrag.curation.ops.Curator` (:func:`_curating`). The blocking
:class:`~kgrag.api.blocking.SyncKGRag` derives its own from these.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from kgrag.curation.ops import Curator
from kgrag.llm.ledger import operation

if TYPE_CHECKING:
    from kgrag.indexing.indexer import Indexer
    from kgrag.indexing.service import IndexingService
    from kgrag.storage.base import Storage

T = TypeVar("T")


class _Index(Protocol):
    """What the mixin needs of its owner (an open :class:`~kgrag.api.facade.KGRag`)."""

    @property
    def storage(self) -> Storage: ...
    @property
    def indexer(self) -> Indexer: ...
    def writing(self, *, shared: bool = False) -> AbstractAsyncContextManager[None]: ...
    @property
    def indexing(self) -> IndexingService: ...


def _reader(rag: object) -> Curator:
    """A curator of an open :class:`KGRag`, for reading the records (writes: :func:`_curating`)."""
    owner = cast("_Index", rag)  # the mixin is only ever mixed into KGRag
    return Curator(owner.storage, owner.indexer.applier)


async def _curating(rag: object, act: Callable[[Curator], Awaitable[T]]) -> T:
    """Run ``act`` on a curator through the index's one write path (its writer lease)."""
    owner = cast("_Index", rag)  # the mixin is only ever mixed into KGRag

    async def run(indexer: Indexer) -> T:
        return await act(Curator(indexer.storage, indexer.applier))

    with operation("curate", unless_set=True):  # its model calls count as curation
        return await owner.indexing.write("curate", run)


class CurationMethods:
    """Merge, unmerge and edit the graph; every change survives re-indexing (docs/curation.md)."""

    async def merge_entities(
        self,
        target: str,
        sources: list[str],
        *,
        evidence: dict[str, Any] | None = None,
        origin: str = "manual",
    ) -> str:
        """Merge ``sources`` into ``target``; returns the merge id (undo: :meth:`unmerge`).

        The sources become aliases of the target: their edges are re-pointed,
        parallel edges merged, self-loops dropped, and later documents that
        name a source land on the target. ``evidence`` (JSON data) and
        ``origin`` (``manual``, ``dedupe``, ...) are recorded with the merge.
        """
        return await _curating(
            self, lambda c: c.merge(target, sources, evidence=evidence, origin=origin)
        )

    async def merge_groups(
        self,
        groups: list[tuple[str, list[str]]],
        *,
        evidence: list[dict[str, Any] | None] | None = None,
        origin: str = "dedupe",
    ) -> list[str]:
        """Merge each ``(target, sources)`` group; returns the merge ids, in order.

        The same graph and records as :meth:`merge_entities` on each group in
        turn, but one recompute and one transaction for all of them (what
        ``kgrag dedupe --apply`` needs for thousands of groups). ``evidence``,
        when given, has one entry per group.
        """
        return await _curating(self, lambda c: c.merge_groups(groups, evidence, origin=origin))

    async def unmerge(self, merge_id: str) -> None:
        """Undo a merge (see :meth:`merges` for the ids)."""
        await _curating(self, lambda c: c.unmerge(merge_id))

    async def merges(self) -> list[dict[str, Any]]:
        """Recorded merges, oldest first: id, target, sources, origin, evidence, created_at."""
        return await _reader(self).merges()

    async def split_entity(self, name: str, parts: dict[str, list[str]]) -> str:
        """Separate a homonym by chunk; returns the split id (undo: :meth:`unsplit`).

        ``parts``: each new name -> the chunk ids whose mentions of ``name``
        go to it (entity rows and relation endpoints); chunks not listed keep
        ``name``. Recorded, so it holds when those chunks are indexed again.
        """
        return await _curating(self, lambda c: c.split(name, parts))

    async def unsplit(self, split_id: str) -> None:
        """Undo a split (see :meth:`splits` for the ids)."""
        await _curating(self, lambda c: c.unsplit(split_id))

    async def splits(self) -> list[dict[str, Any]]:
        """Recorded splits, oldest first: id, name, parts, created_at."""
        return await _reader(self).splits()

    async def create_entity(self, name: str, entity_type: str = "", description: str = "") -> None:
        """A manual entity, which exists with no document (source ``manual_creation``)."""
        await _curating(self, lambda c: c.create_entity(name, entity_type, description))

    async def edit_entity(
        self, name: str, *, description: str | None = None, entity_type: str | None = None
    ) -> None:
        """Override an entity's fields; they hold whatever documents say later."""
        fields = {"description": description, "entity_type": entity_type}
        await _curating(
            self, lambda c: c.edit_entity(name, {k: v for k, v in fields.items() if v is not None})
        )

    async def clear_entity_edits(self, name: str, fields: list[str]) -> None:
        """Drop overrides of ``fields``: the computed values come back."""
        await _curating(self, lambda c: c.edit_entity(name, dict.fromkeys(fields)))

    async def rename_entity(self, old: str, new: str) -> str:
        """Rename an entity (recorded as a merge into the new name); returns the merge id."""
        return await _curating(self, lambda c: c.rename(old, new))

    async def delete_entity(self, name: str) -> None:
        """Delete an entity and its relations; it stays deleted until :meth:`restore_entity`."""
        await _curating(self, lambda c: c.delete_entity(name))

    async def restore_entity(self, name: str) -> None:
        await _curating(self, lambda c: c.restore_entity(name))

    async def create_relation(
        self,
        source: str,
        target: str,
        *,
        description: str = "",
        keywords: str = "",
        weight: float = 1.0,
    ) -> None:
        """A manual relation between two entities of the graph."""
        await _curating(
            self,
            lambda c: c.create_relation(
                source, target, description=description, keywords=keywords, weight=weight
            ),
        )

    async def edit_relation(
        self,
        source: str,
        target: str,
        *,
        description: str | None = None,
        keywords: str | None = None,
        weight: float | None = None,
    ) -> None:
        """Override a relation's fields; they hold whatever documents say later."""
        fields = {"description": description, "keywords": keywords, "weight": weight}
        given = {k: v for k, v in fields.items() if v is not None}
        await _curating(self, lambda c: c.edit_relation(source, target, given))

    async def delete_relation(self, source: str, target: str) -> None:
        """Delete a relation; it stays deleted until :meth:`restore_relation`."""
        await _curating(self, lambda c: c.delete_relation(source, target))

    async def restore_relation(self, source: str, target: str) -> None:
        await _curating(self, lambda c: c.restore_relation(source, target))
