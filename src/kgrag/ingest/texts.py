"""Raw texts as documents: what ``KGRag.insert`` indexes, one document per text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kgrag.errors import ConfigError
from kgrag.ingest.ids import doc_id, source_doc_id
from kgrag.ingest.names import display_name, is_text
from kgrag.types import Document


def text_documents(
    texts: str | Iterable[str],
    file_paths: Iterable[str] | None = None,
    ids: Iterable[str] | None = None,
    metadata: Mapping[str, object] | None = None,
) -> list[Document]:
    """One document per text, with its path and id (one entry per text, or none).

    Lists of different lengths are a :class:`ConfigError`, never silently
    cut, and so is an id that is not valid text (a path that is not is
    kept escaped). A text with an id is known by it (a later text under
    the same id supersedes it); one without is known by its content.
    """
    items = strings(texts)
    paths = strings(file_paths) if file_paths is not None else ["unknown_source"] * len(items)
    sources: list[str | None] = [*strings(ids)] if ids is not None else [None] * len(items)
    if not len(items) == len(paths) == len(sources):
        raise ConfigError(
            f"insert(): {len(items)} text(s), {len(paths)} file path(s) and "
            f"{len(sources)} id(s); give one of each per text"
        )
    if not all(is_text(s) for s in sources if s):
        raise ConfigError("insert(): an id must be valid Unicode text (it has a lone surrogate)")
    paths = [p if is_text(p) else display_name(p) for p in paths]  # a path here is a label
    return [
        Document(
            id=source_doc_id(src) if src else doc_id(t),
            content=t,
            file_path=p,
            source=src,
            metadata=dict(metadata or {}),
        )
        for t, p, src in zip(items, paths, sources, strict=True)
    ]


def strings(values: str | Iterable[str]) -> list[str]:
    """A list of strings; a lone string is one item, not its characters."""
    return [values] if isinstance(values, str) else list(values)
