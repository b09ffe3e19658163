"""Which documents of a batch are new, updated, moved or unchanged.

A document is identified by its source (a file's canonical path, or an id
the caller gives); raw texts without a source are identified by their
content. The content hash says whether a known source changed:

- unknown source: **new**; if its content is already indexed under a file
  that no longer exists, it is a **move**: the document keeps its id and
  takes the new source (nothing is extracted again, nothing is
  duplicated; other gone copies of the same content are superseded);
- known source, other content: **updated**; the new version supersedes
  the committed one when it commits;
- known source, same content: **unchanged** (skipped quietly), unless it
  failed before, in which case it is queued again (**requeued**), or comes
  with other metadata, which is stored (**metadata_updated**; nothing is
  extracted again);
- a document the caller says supersedes others (``replaces``, ``kgrag
  index --replace OLD NEW``): **replaced**.

Queued documents get a ``pending`` record and their text in one
transaction; nothing reaches the graph until they are processed.

Identity is the source, not the id: a document whose source a stored
record holds takes that record's id (a moved file's id is its first
path's). A new source whose usual id a moved document holds gets the next
free one (:func:`kgrag.ingest.ids.source_doc_id` with an ``attempt``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kgrag.ingest.blocks import encode_blocks
from kgrag.ingest.ids import content_hash, source_doc_id
from kgrag.ingest.names import display_name
from kgrag.storage.layout import FULL_DOCS
from kgrag.storage.layout.rows import FullDocRow
from kgrag.storage.layout.typed import TypedKV
from kgrag.types import DocRecord, DocStatus, Document

if TYPE_CHECKING:
    from kgrag.storage.base import Storage


@dataclass
class EnqueueReport:
    """What one enqueue call found; lists of document ids (messages for ``duplicates``)."""

    new: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    requeued: list[str] = field(default_factory=list)  # failed before, queued again
    duplicates: list[str] = field(default_factory=list)  # same source twice in one batch
    replaced: list[str] = field(default_factory=list)  # supersede documents the caller named
    metadata_updated: list[str] = field(default_factory=list)  # same content, new metadata

    @property
    def queued(self) -> list[str]:
        return [*self.new, *self.updated, *self.replaced, *self.moved, *self.requeued]


def summary_text(text: str) -> str:
    flat = " ".join(text.split())
    return flat[:252] + "..." if len(flat) > 255 else flat


def _gone(record: DocRecord) -> bool:
    """Whether a record's source is a file path that no longer exists."""
    src = record.source
    return src is not None and os.path.isabs(src) and not os.path.exists(src)


def _new_record(
    doc: Document, digest: str, seq: int, now: float, old: DocRecord | None
) -> DocRecord:
    return DocRecord(
        id=doc.id,
        status=DocStatus.PENDING,
        file_path=doc.file_path,
        content_length=len(doc.content),
        content_summary=summary_text(doc.content),
        enqueue_seq=seq,
        created_at=old.created_at if old else now,
        updated_at=now,
        source=doc.source,
        content_hash=digest,
        metadata=dict(doc.metadata) if doc.metadata or old is None else dict(old.metadata),
        disabled=old.disabled if old else False,
        replaces=list(doc.replaces),
        load_warnings=list(doc.warnings),
        relative_path=doc.relative_path,
    )


def _full_doc(doc: Document) -> FullDocRow:
    """The ``full_docs`` row: text, path, source and (structure-aware ingest) compact blocks."""
    row: FullDocRow = {"content": doc.content, "file_path": doc.file_path, "source": doc.source}
    blocks = encode_blocks(doc.blocks) if doc.blocks else None
    if blocks is not None:  # --- blocks (kgrag.ingest.blocks) ---
        row["blocks"] = blocks
    return row


@dataclass(slots=True)
class _Known:
    """The stored records an enqueue call looks documents up in, and the ids it gave out."""

    by_id: dict[str, DocRecord]
    by_source: dict[str, DocRecord] = field(default_factory=dict)
    by_hash: dict[str, list[DocRecord]] = field(default_factory=dict)
    claimed: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, records: list[DocRecord]) -> _Known:
        known = cls({r.id: r for r in records})
        for r in records:
            if r.source is not None:
                known.by_source[r.source] = r
            known.by_hash.setdefault(r.content_hash, []).append(r)
        return known

    def record_of(self, doc: Document) -> DocRecord | None:
        """The stored record of ``doc``'s source, whose id ``doc`` takes; None: a free id."""
        if doc.source is None:
            return self.by_id.get(doc.id)  # a raw text: known by its content
        held = self.by_source.get(doc.source)
        if held is not None:
            doc.id = held.id
            return held
        attempt = 0
        while doc.id in self.by_id or doc.id in self.claimed:
            attempt += 1  # its usual id belongs to a document that moved away from this source
            doc.id = source_doc_id(doc.source, attempt)
        return None

    def moved_from(self, doc: Document, digest: str) -> list[DocRecord]:
        """Records of ``doc``'s content whose file no longer exists (not yet taken)."""
        same = self.by_hash.get(digest, [])
        return [r for r in same if r.id != doc.id and r.id not in self.claimed and _gone(r)]


def _lookup_all(docs: list[Document], stored: dict[str, DocRecord]) -> bool:
    """Whether some document is not found by its id alone (new, moved, or its id held)."""
    return any(d.id not in stored or stored[d.id].source != d.source for d in docs)


class Enqueuer:
    """Classifies and queues documents (see the module docstring)."""

    def __init__(self, storage: Storage):
        self.storage = storage

    async def enqueue(self, docs: list[Document]) -> EnqueueReport:
        report, seen = EnqueueReport(), set()
        stored = await self.storage.doc_status.get_many([d.id for d in docs])
        every = await self._all() if _lookup_all(docs, stored) else list(stored.values())
        known = _Known.of(every)
        queue: list[tuple[Document, str, DocRecord | None]] = []
        touched: list[DocRecord] = []
        for doc in docs:
            if doc.id in seen:
                report.duplicates.append(
                    f"{display_name(doc.file_path)}: given twice; indexed once"
                )
                continue
            seen.add(doc.id)
            digest, old = content_hash(doc.content), known.record_of(doc)
            kind, moved = self._classify(doc, digest, old, known)
            known.claimed.add(doc.id)
            if kind == "unchanged" and doc.metadata and old and old.metadata != doc.metadata:
                old.metadata, kind = dict(doc.metadata), "metadata_updated"
                touched.append(old)
            getattr(report, kind).append(doc.id)
            if kind in ("unchanged", "metadata_updated"):
                continue
            queue.append((doc, digest, old or moved))  # a move keeps its flags and metadata
        await self._write(queue, touched)
        return report

    def _classify(
        self, doc: Document, digest: str, old: DocRecord | None, known: _Known
    ) -> tuple[str, DocRecord | None]:
        """The kind of ``doc`` and, for a move, the record it moves from (whose id it takes)."""
        if old is not None:
            if doc.replaces:
                return "replaced", None
            if old.content_hash != digest:
                return "updated", None
            return ("requeued" if old.status == DocStatus.FAILED else "unchanged"), None
        moved = known.moved_from(doc, digest)
        if moved:
            doc.id = moved[0].id
            doc.replaces = sorted(set(doc.replaces) | {r.id for r in moved[1:]})
            return "moved", moved[0]
        return ("replaced" if doc.replaces else "new"), None

    async def _all(self) -> list[DocRecord]:
        return await self.storage.doc_status.by_status(*DocStatus)

    async def _write(
        self, queue: list[tuple[Document, str, DocRecord | None]], touched: list[DocRecord]
    ) -> None:
        if not queue and not touched:
            return
        seq, now = await self.storage.doc_status.next_seq(), time.time()
        records = [_new_record(d, h, seq + i, now, old) for i, (d, h, old) in enumerate(queue)]
        async with self.storage.transaction():
            if queue:
                rows = {d.id: _full_doc(d) for d, _, _ in queue}
                await TypedKV(self.storage.kv(FULL_DOCS), FullDocRow).upsert(rows)
            await self.storage.doc_status.upsert([*records, *touched])
