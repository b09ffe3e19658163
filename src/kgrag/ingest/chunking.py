"""Split document text into chunks measured in tokens.

Two chunkers:

* :func:`chunk_by_tokens` - fixed token windows (LightRAG's default "F"
  chunker): windows of ``size`` tokens starting every ``size - overlap``
  tokens, optionally after a first split on a character string.
* :func:`chunk_recursive` - separator-based and CJK aware: split on the
  first separator that occurs (paragraphs, lines, CJK sentence marks,
  spaces, finally characters), merge neighbouring pieces up to ``size``
  tokens with up to ``overlap`` tokens shared.

Two deliberate differences from LightRAG's token chunker: a trailing window
that lies wholly inside the previous one is not emitted (it would repeat
text already chunked), and replacement characters left at a window edge
by cutting a multi-byte character in half are trimmed (the neighbouring
window holds the whole character when ``overlap > 0``).

:func:`make_chunks` turns a :class:`~kgrag.types.Document` into
:class:`~kgrag.types.Chunk` records with content-hash ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from kgrag.errors import ConfigError
from kgrag.ingest.block_chunker import locate_chunks, make_block_chunks
from kgrag.ingest.ids import unique_chunks
from kgrag.ingest.recursive import DEFAULT_SEPARATORS, split_recursive
from kgrag.llm.tokenizer import Tokenizer
from kgrag.types import Chunk, Document

if TYPE_CHECKING:  # pragma: no cover
    from kgrag.config.settings import Settings

__all__ = [
    "DEFAULT_SEPARATORS",
    "ChunkPiece",
    "chunk_by_tokens",
    "chunk_recursive",
    "make_chunks",
    "token_windows",
]


@dataclass(slots=True, frozen=True)
class ChunkPiece:
    """One chunk before it is tied to a document."""

    content: str
    tokens: int
    order: int


def _check(size: int, overlap: int) -> None:
    if size < 1:
        raise ConfigError(f"chunk size must be positive, got {size}")
    if not 0 <= overlap < size:
        raise ConfigError(f"chunk overlap must be in [0, size), got {overlap} for size {size}")


def token_windows(n_tokens: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """``(start, end)`` token ranges covering ``n_tokens`` tokens in order.

    Windows start every ``size - overlap`` tokens; a last window that
    would end inside the previous one is left out.
    """
    _check(size, overlap)
    windows: list[tuple[int, int]] = []
    for start in range(0, n_tokens, size - overlap):
        end = min(start + size, n_tokens)
        if windows and end <= windows[-1][1]:
            break
        windows.append((start, end))
    return windows


def _decode_window(tokenizer: Tokenizer, tokens: list[int]) -> str:
    return tokenizer.decode(tokens).strip().strip("\ufffd").strip()


def _split_tokens(
    text: str, tokenizer: Tokenizer, size: int, overlap: int
) -> list[tuple[str, int]]:
    tokens = tokenizer.encode(text)
    return [
        (_decode_window(tokenizer, tokens[a:b]), b - a)
        for a, b in token_windows(len(tokens), size, overlap)
    ]


def chunk_by_tokens(
    text: str,
    tokenizer: Tokenizer,
    size: int = 1200,
    overlap: int = 100,
    split_by_character: str | None = None,
    split_by_character_only: bool = False,
) -> list[ChunkPiece]:
    """Fixed token windows, optionally after splitting on a string.

    With ``split_by_character`` the text is split on it first; pieces
    longer than ``size`` tokens are re-split into token windows unless
    ``split_by_character_only`` is set, in which case they are kept whole.
    Pieces are stripped and empty ones dropped; ``order`` counts from 0.
    """
    _check(size, overlap)
    raw: list[tuple[str, int]] = []
    if not split_by_character:
        raw = _split_tokens(text, tokenizer, size, overlap)
    else:
        for part in text.split(split_by_character):
            n = tokenizer.count(part)
            if n > size and not split_by_character_only:
                raw.extend(_split_tokens(part, tokenizer, size, overlap))
            else:
                raw.append((part.strip(), n))
    kept = [(c, n) for c, n in raw if c]
    return [ChunkPiece(content=c, tokens=n, order=i) for i, (c, n) in enumerate(kept)]


def chunk_recursive(
    text: str,
    tokenizer: Tokenizer,
    size: int = 1200,
    overlap: int = 100,
    separators: Sequence[str] = DEFAULT_SEPARATORS,
) -> list[ChunkPiece]:
    """Separator-based chunks of at most ``size`` tokens (see :mod:`kgrag.ingest.recursive`)."""
    pieces = split_recursive(text, tokenizer, size, overlap, separators)
    return [ChunkPiece(content=c, tokens=tokenizer.count(c), order=i) for i, c in enumerate(pieces)]


def _pieces(
    text: str,
    tokenizer: Tokenizer,
    method: str,
    size: int,
    overlap: int,
    split_by_character: str | None,
    split_by_character_only: bool,
    separators: Sequence[str] | None,
) -> list[ChunkPiece]:
    if method == "token":
        return chunk_by_tokens(
            text, tokenizer, size, overlap, split_by_character, split_by_character_only
        )
    if method == "recursive":
        return chunk_recursive(
            text, tokenizer, size, overlap, tuple(separators or DEFAULT_SEPARATORS)
        )
    raise ConfigError(f"unknown chunker {method!r}; known: recursive, token")


def make_chunks(
    doc: Document,
    tokenizer: Tokenizer,
    *,
    method: Literal["token", "recursive"] = "token",
    size: int = 1200,
    overlap: int = 100,
    split_by_character: str | None = None,
    split_by_character_only: bool = False,
    separators: Sequence[str] | None = None,
) -> list[Chunk]:
    """Chunk a document into :class:`Chunk` records.

    Chunk ids are ``chunk-`` + md5 of the chunk text, so a text repeated
    within the document yields one chunk (its first occurrence); ``order``
    is renumbered from 0 over the chunks kept.
    """
    pieces = _pieces(
        doc.content,
        tokenizer,
        method,
        size,
        overlap,
        split_by_character,
        split_by_character_only,
        separators,
    )
    return unique_chunks(doc.id, doc.file_path, ((p.content, p.tokens, None) for p in pieces))


def make_chunks_for_settings(
    doc: Document, settings: Settings, tokenizer: Tokenizer
) -> list[Chunk]:
    """:func:`make_chunks` with the chunking section of a ``Settings`` object.

    A document with blocks (loaded from a file) is chunked along them by
    :mod:`kgrag.ingest.block_chunker`, unless ``split_by_character`` asks
    for an explicit split: then that split is made as always and the chunks
    are only given their location.
    """
    # --- structure-aware chunking (kgrag.ingest.block_chunker) ---
    chunking = settings.chunking
    if doc.blocks and not chunking.split_by_character:
        return make_block_chunks(doc, tokenizer, size=chunking.size, overlap=chunking.overlap)
    chunks = make_chunks(
        doc,
        tokenizer,
        method=chunking.chunker,
        size=chunking.size,
        overlap=chunking.overlap,
        split_by_character=chunking.split_by_character,
        split_by_character_only=chunking.split_by_character_only,
    )
    if doc.blocks:
        locate_chunks(chunks, doc.content, doc.blocks)
    return chunks
