"""Content-derived identifiers.

Ids are md5 hex digests behind a short prefix, so the same content always
gets the same id across runs and machines:

* ``doc-``   + md5("source:" + source) for a document with a source (a
  file's canonical path, or an id the caller gave), else md5(its text);
  a moved file keeps the id it had (:mod:`kgrag.indexing.enqueue`), and a
  source whose id is held by a moved document gets :func:`source_doc_id`
  with a ``attempt`` number
* ``chunk-`` + md5(chunk text)
* ``ent-``   + md5(entity name)
* ``rel-``   + md5(a + "\\x1f" + b) where ``(a, b)`` is the sorted name pair,
  so a relation has one id whichever direction it was stated in.
"""

from __future__ import annotations

from collections.abc import Iterable
from hashlib import md5

from kgrag.storage.layout import PAIR_SEP as PAIR_SEP  # joins a relation's sorted names
from kgrag.types import Chunk


def _md5(text: str) -> str:
    return md5(_bytes(text)).hexdigest()


def _bytes(text: str) -> bytes:
    """UTF-8 of ``text``; a surrogate (a file name's byte that is not UTF-8) still encodes.

    Ordinary text gives its plain UTF-8 (so ids never change); a name read
    from the file system gives its original bytes (``os.fsencode``); any
    other lone surrogate its UTF-8 form (``surrogatepass``).
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def doc_id(content: str) -> str:
    """Id of a document: ``doc-`` + md5 of its text."""
    return "doc-" + _md5(content)


def content_hash(content: str) -> str:
    """md5 of a document's text: tells whether a source's content changed."""
    return _md5(content)


def source_doc_id(source: str, attempt: int = 0) -> str:
    """Id of a document known by its source (a canonical path or a caller's id).

    ``attempt`` > 0: the next id to try when the plain one is held by a
    document that moved away from ``source``.
    """
    suffix = f"{PAIR_SEP}{attempt}" if attempt else ""
    return "doc-" + _md5("source:" + source + suffix)


def chunk_id(content: str) -> str:
    """Id of a chunk: ``chunk-`` + md5 of its text."""
    return "chunk-" + _md5(content)


def entity_vector_id(name: str) -> str:
    """Id of an entity's vector: ``ent-`` + md5 of its name."""
    return "ent-" + _md5(name)


def canonical_pair(a: str, b: str) -> tuple[str, str]:
    """The relation endpoints in sorted order."""
    return (a, b) if a <= b else (b, a)


def relation_vector_id(a: str, b: str) -> str:
    """Id of a relation's vector; the same for ``(a, b)`` and ``(b, a)``."""
    lo, hi = canonical_pair(a, b)
    return "rel-" + _md5(lo + PAIR_SEP + hi)


def unique_chunks(
    doc_id: str, file_path: str, pieces: Iterable[tuple[str, int, dict[str, object] | None]]
) -> list[Chunk]:
    """Chunks of one document from its ``(content, tokens, location)`` pieces, in order.

    A text that repeats is kept once (its id is its content's), and
    ``order`` counts the chunks kept.
    """
    chunks: list[Chunk] = []
    seen: set[str] = set()
    for content, tokens, location in pieces:
        cid = chunk_id(content)
        if cid in seen:
            continue
        seen.add(cid)
        chunks.append(
            Chunk(
                id=cid,
                doc_id=doc_id,
                content=content,
                tokens=tokens,
                order=len(chunks),
                file_path=file_path,
                location=dict(location or {}),
            )
        )
    return chunks
