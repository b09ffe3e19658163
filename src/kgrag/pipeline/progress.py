"""Progress reporting for indexing runs.

The indexer talks to a :class:`ProgressSink`; the CLI plugs in
:class:`RichProgress` (a live bar on stderr), library users get the silent
:class:`NullProgress` unless they pass their own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class ProgressSink(Protocol):
    def start(self, documents: int) -> None: ...
    def chunks_found(self, count: int) -> None: ...
    def chunk_extracted(self, entities: int, relations: int) -> None: ...
    def document_done(self, ok: bool) -> None: ...
    def stop(self) -> None: ...


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


class RichProgress:
    """A live progress bar: documents, chunks, entities, LLM calls and ETA."""

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
        self._chunks_total = self._chunks_done = 0
        self._entities = self._relations = self._failed = 0
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
        self._task = None

    def start(self, documents: int) -> None:
        self._bar.start()
        self._task = self._bar.add_task("docs", total=documents, detail="")

    def _refresh(self, advance: int = 0) -> None:
        detail = (
            f"chunks {self._chunks_done}/{self._chunks_total}  "
            f"entities {self._entities}  relations {self._relations}  "
            f"llm calls {self._llm_calls()}"
            + (f"  [red]failed {self._failed}[/red]" if self._failed else "")
        )
        self._bar.update(self._task, advance=advance, detail=detail)

    def chunks_found(self, count: int) -> None:
        self._chunks_total += count
        self._refresh()

    def chunk_extracted(self, entities: int, relations: int) -> None:
        self._chunks_done += 1
        self._entities += entities
        self._relations += relations
        self._refresh()

    def document_done(self, ok: bool) -> None:
        self._failed += 0 if ok else 1
        self._refresh(advance=1)

    def stop(self) -> None:
        self._refresh()
        self._bar.stop()
