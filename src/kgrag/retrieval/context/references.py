"""What each reference number of the context stands for, so a reader can check it.

A :class:`~kgrag.retrieval.reference.Reference` names one numbered context item and the span of a
source document behind it: document id, file path, pages, section path,
character offsets into the stored document text, and that text. A chunk's
span is the chunk itself. An entity or relation points at the chunk it was
extracted from (one shown in the context when there is one; ``chunks``
lists every such chunk's number).

:func:`item_references` builds them from the assembly alone (no storage
read); :func:`complete_references` fills what that leaves open (the span of
an entity whose source chunks are not in the context, offsets of chunks
indexed without them) with at most two reads, when references are asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from kgrag.retrieval.context.numbering import ItemNumbers
from kgrag.retrieval.records import ChunkHit, EntityHit, RelationHit, as_list
from kgrag.retrieval.reference import Kind, Reference
from kgrag.retrieval.shapes import ReferenceData
from kgrag.retrieval.trace import relation_id
from kgrag.storage.layout import CHUNKS, FULL_DOCS

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

# Source chunks tried per entity or relation whose chunks are all outside the context.
SOURCES_TRIED = 3


def _chunk_row(c: ChunkHit) -> dict[str, object]:
    return {
        "content": c.content,
        "file_path": c.file_path,
        "doc_id": c.doc_id,
        "location": c.location,
    }


def _graph_reference(
    number: int,
    kind: Kind,
    name: str,
    data: Mapping[str, object],
    shown: dict[str, tuple[int, ChunkHit]],
) -> Reference:
    sources = as_list(data.get("source_ids"))
    ref = Reference(number, kind, name, sources=sources)
    ref.chunks = sorted({shown[s][0] for s in sources if s in shown})
    first = next((s for s in sources if s in shown), None)
    if first is not None:
        ref.place(first, _chunk_row(shown[first][1]))
    else:
        paths = as_list(data.get("file_paths"))
        ref.file_path = paths[0] if paths else ""
    return ref


def item_references(
    entities: Sequence[EntityHit],
    relations: Sequence[RelationHit],
    chunks: Sequence[ChunkHit],
    numbers: ItemNumbers,
) -> list[Reference]:
    """A reference per numbered item, by number (from the assembly, no storage read)."""
    shown = {c.id: (n, c) for c, n in zip(chunks, numbers.chunks, strict=False)}
    refs = [
        _graph_reference(n, "entity", e.name, e.data, shown)
        for e, n in zip(entities, numbers.entities, strict=False)
    ]
    refs += [
        _graph_reference(n, "relation", relation_id(r.src, r.tgt), r.data, shown)
        for r, n in zip(relations, numbers.relations, strict=False)
    ]
    for c, n in zip(chunks, numbers.chunks, strict=False):
        ref = Reference(n, "chunk", c.id)
        ref.place(c.id, _chunk_row(c))
        refs.append(ref)
    return sorted(refs, key=lambda r: r.number)


async def _place_sources(
    storage: Storage, refs: list[Reference], allows: Callable[[Mapping[str, object]], bool]
) -> None:
    """Spans for entities and relations none of whose source chunks is in the context."""
    open_refs = [r for r in refs if not r.chunk_id and r.sources]
    ids = list(dict.fromkeys(s for r in open_refs for s in r.sources[:SOURCES_TRIED]))
    if not ids:
        return
    rows = dict(zip(ids, await storage.kv(CHUNKS).get_many(ids), strict=False))
    for ref in open_refs:
        found = next(
            (s for s in ref.sources[:SOURCES_TRIED] if rows.get(s) and allows(rows[s] or {})),
            None,
        )
        if found is not None:
            ref.place(found, rows[found] or {})


async def _fill_offsets(storage: Storage, refs: list[Reference]) -> None:
    """Offsets of spans whose chunk was indexed without them (raw texts): found in the document."""
    todo = [r for r in refs if r.text and r.doc_id and r.start is None]
    doc_ids = list(dict.fromkeys(r.doc_id for r in todo))
    if not doc_ids:
        return
    docs = dict(zip(doc_ids, await storage.kv(FULL_DOCS).get_many(doc_ids), strict=False))
    for ref in todo:
        content = str((docs.get(ref.doc_id) or {}).get("content") or "")
        at = content.find(ref.text)
        if at >= 0:
            ref.start, ref.end = at, at + len(ref.text)


async def complete_references(
    storage: Storage,
    references: Sequence[Mapping[str, object]],
    allows: Callable[[Mapping[str, object]], bool] = lambda row: True,
) -> list[ReferenceData]:
    """``references`` (as :meth:`Reference.to_dict` gives them) with their open spans filled.

    ``allows`` says whether a text_chunks row may be shown (the query's document filter).
    """
    refs = [Reference.from_dict(r) for r in references]
    await _place_sources(storage, refs, allows)
    await _fill_offsets(storage, refs)
    return [r.to_dict() for r in refs]
