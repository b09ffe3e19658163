"""Progress reporting for indexing runs.

The indexer talks to a :class:`ProgressSink`; the CLI plugs in
:class:`RichProgress` (a live bar on stderr), library users get the silent
:class:`NullProgress` unless they pass their own.

What a sink hears is the run's work: the documents to process, the chunks
that need extracting (chunks the index already holds need none), and the
entity and relation *records* extracted from them, before they merge into
the graph (two chunks naming Scrooge make two records, one entity). The
bar and the run's :class:`~kgrag.api.facade.IndexReport` (``report.progress``)
count them with the same :class:`ProgressCounts`, so the bar's last line
and the summary printed after it agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.progress import TaskID


class ProgressSink(Protocol):
    def start(self, documents: int) -> None: ...
    def chunks_found(self, count: int) -> None: ...
    def chunk_extracted(self, entities: int, relations: int) -> None: ...
    def document_done(self, ok: bool) -> None: ...
    def stop(self) -> None: ...


@dataclass(slots=True)
class ProgressCounts:
    """The work of one indexing run, as its progress sink heard it."""

    documents: int = 0  # documents to process
    documents_done: int = 0  # processed or failed
    documents_failed: int = 0
    chunks: int = 0  # chunks that needed extracting
    chunks_extracted: int = 0
    entities: int = 0  # entity records extracted (before merging)
    relations: int = 0  # relation records extracted (before merging)

    def start(self, documents: int) -> None:
        self.documents += documents

    def chunks_found(self, count: int) -> None:
        self.chunks += count

    def chunk_extracted(self, entities: int, relations: int) -> None:
        self.chunks_extracted += 1
        self.entities += entities
        self.relations += relations

    def document_done(self, ok: bool) -> None:
        self.documents_done += 1
        self.documents_failed += 0 if ok else 1

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


class NullProgress:
    def start(self, documents: int) -> None:
        pass

    def chunks_found(self, count: int) -> None:
        pass

    def chunk_extracted(self, entities: int, relations: int) -> None:
        pass

    def document_done(self, ok: bool) -> None:
        pass

    def stop(self) -> None:
        pass


class CountingProgress:
    """Counts what it hears in :attr:`counts` and passes it on to ``inner``."""

    def __init__(self, inner: ProgressSink | None = None):
        self.inner: ProgressSink = inner or NullProgress()
        self.counts = ProgressCounts()

    def start(self, documents: int) -> None:
        self.counts.start(documents)
        self.inner.start(documents)

    def chunks_found(self, count: int) -> None:
        self.counts.chunks_found(count)
        self.inner.chunks_found(count)

    def chunk_extracted(self, entities: int, relations: int) -> None:
        self.counts.chunk_extracted(entities, relations)
        self.inner.chunk_extracted(entities, relations)

    def document_done(self, ok: bool) -> None:
        self.counts.document_done(ok)
        self.inner.document_done(ok)

    def stop(self) -> None:
        self.inner.stop()


def describe(counts: ProgressCounts, llm_calls: int) -> str:
    """The bar's detail text (the summary after the run uses the same words)."""
    failed = f"  [red]failed {counts.documents_failed}[/red]" if counts.documents_failed else ""
    return (
        f"chunks extracted {counts.chunks_extracted}/{counts.chunks}  "
        f"records: {counts.entities} entities, {counts.relations} relations  "
        f"llm calls {llm_calls}{failed}"
    )


class RichProgress:
    """A live progress bar: documents, chunks, extracted records, LLM calls and ETA."""

    def __init__(self, llm_calls: Callable[[], int]):
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._llm_calls = llm_calls
        self.counts = ProgressCounts()
        self._bar = Progress(
            TextColumn("[bold]indexing"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("docs"),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self._task: TaskID | None = None

    def start(self, documents: int) -> None:
        self.counts.start(documents)
        self._bar.start()
        self._task = self._bar.add_task("docs", total=documents, detail="")

    def _refresh(self, advance: int = 0) -> None:
        if self._task is not None:
            detail = describe(self.counts, self._llm_calls())
            self._bar.update(self._task, advance=advance, detail=detail)

    def chunks_found(self, count: int) -> None:
        self.counts.chunks_found(count)
        self._refresh()

    def chunk_extracted(self, entities: int, relations: int) -> None:
        self.counts.chunk_extracted(entities, relations)
        self._refresh()

    def document_done(self, ok: bool) -> None:
        self.counts.document_done(ok)
        self._refresh(advance=1)

    def stop(self) -> None:
        self._refresh()
        self._bar.stop()
