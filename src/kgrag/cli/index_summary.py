"""The summary lines ``kgrag index`` and ``kgrag retry`` print after a run.

Each says what the run did, no more: a ``--replace`` file is *replaced*,
not new; an unchanged file whose ``--meta`` was stored is *metadata
updated*; a retry says *retried*, and when every chunk's extraction was
already stored it says that nothing was extracted again instead of
showing a count of nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict


class BuiltWith(TypedDict, total=False):
    """What the index was built with (empty for an index that remembers nothing yet)."""

    language: str | None
    language_source: str | None
    embedder: str
    extractor: str | None
    chunk_size: int | None


class IndexSummary(TypedDict):
    """What ``kgrag index`` and ``kgrag retry`` report (printed as is by ``--json``)."""

    settings: BuiltWith
    documents: int
    processed: int
    failed: int
    duplicates: int
    new: int
    updated: int
    replaced: int
    moved: int
    requeued: int
    metadata_updated: int
    unchanged: int
    with_warnings: int
    chunks: int
    entities: int
    relations: int
    chunks_to_extract: int  # this run's work, counted as the progress bar counts it
    chunks_extracted: int
    entity_records: int
    relation_records: int
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    insert_s: float
    skipped: int


# the summary's document kinds, in the order and words the line uses
KINDS = (
    ("new", "new"),
    ("updated", "updated"),
    ("replaced", "replaced"),
    ("moved", "moved"),
    ("requeued", "failed before, indexed again"),
    ("metadata_updated", "metadata updated"),
    ("unchanged", "unchanged"),
)


def kinds_line(summary: Mapping[str, object]) -> str:
    """``1 replaced, 2 unchanged``; empty when the run found no document."""
    return ", ".join(f"{summary[key]} {words}" for key, words in KINDS if summary.get(key))


def work_line(summary: IndexSummary, *, retry: bool = False) -> str:
    """What the run processed and extracted, what the graph holds, what the models cost."""
    done, failed = summary["processed"], summary["failed"]
    if retry and not done and not failed:
        head = "retried nothing: no document had failed, had warnings or was interrupted"
    else:
        verb = "retried" if retry else "indexed"
        head = f"{verb} {done} document(s) in {summary['insert_s']:.1f} s: " + _extracted(summary)
    return (
        f"{head}; the graph holds {summary['chunks']} chunks, {summary['entities']} entities, "
        f"{summary['relations']} relations; "
        f"{summary['llm_calls']} LLM calls ({summary['prompt_tokens']} prompt + "
        f"{summary['completion_tokens']} completion tokens)"
        + (f"; {failed} failed (kgrag retry)" if failed else "")
        + (f"; {summary['skipped']} file(s) skipped" if summary["skipped"] else "")
    )


def _extracted(summary: IndexSummary) -> str:
    if not summary["chunks_to_extract"] and summary["processed"]:
        return "no chunk needed extracting (every chunk's extraction was already stored)"
    return (
        f"chunks extracted {summary['chunks_extracted']}/{summary['chunks_to_extract']} "
        f"(records: {summary['entity_records']} entities, "
        f"{summary['relation_records']} relations)"
    )
