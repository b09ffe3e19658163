"""Documents that arrive with their chunks already made (``kgrag import``).

An imported document (a LightRAG document, a round-tripped export, a
user-built graph) comes with its own chunks and their facts. Its
``full_docs`` row lists those chunks under :data:`GIVEN_CHUNKS`, so every
later run that prepares the document again (``kgrag rebuild``, a retry)
reuses them as they are instead of chunking the text with the index's
chunker, and never extracts them again while their stored facts live.
"""

from __future__ import annotations

from typing import Final

from kgrag.ingest.ids import unique_chunks
from kgrag.storage.layout.rows import FullDocRow, GivenChunkRow
from kgrag.types import Chunk

GIVEN_CHUNKS: Final = "chunks"  # full_docs field: [{"content", "tokens", "location"}] in order


def chunk_row(chunk: Chunk) -> GivenChunkRow:
    """What :data:`GIVEN_CHUNKS` keeps of one chunk."""
    return {"content": chunk.content, "tokens": chunk.tokens, "location": chunk.location}


def given_chunks(doc_id: str, row: FullDocRow) -> list[Chunk] | None:
    """The chunks a ``full_docs`` row was imported with, or ``None`` for an ordinary one."""
    given = row.get(GIVEN_CHUNKS)
    if given is None:
        return None
    return unique_chunks(
        doc_id,
        row.get("file_path", "unknown_source"),
        ((i["content"], int(i.get("tokens", 0)), i.get("location")) for i in given),
    )
