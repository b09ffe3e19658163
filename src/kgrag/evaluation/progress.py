"""Progress of an evaluation: a bar on stderr for the command line, silence for the API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.progress import Progress as RichProgressBar
    from rich.progress import TaskID


class Progress(Protocol):
    """Hears the work: ``start`` (how many steps), ``advance`` after each, ``stop``."""

    def start(self, total: int, label: str) -> None: ...
    def advance(self, detail: str = "") -> None: ...
    def stop(self) -> None: ...


class NullProgress:
    def start(self, total: int, label: str) -> None:
        pass

    def advance(self, detail: str = "") -> None:
        pass

    def stop(self) -> None:
        pass


class RichBar:
    """A live bar on stderr: steps done of all, what is being done, elapsed time and ETA."""

    def __init__(self) -> None:
        self._bar: RichProgressBar | None = None
        self._task: TaskID | None = None

    def start(self, total: int, label: str) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.stop()
        self._bar = Progress(
            TextColumn(f"[bold]{label}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self._bar.start()
        self._task = self._bar.add_task(label, total=total, detail="")

    def advance(self, detail: str = "") -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, advance=1, detail=detail)

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
        self._bar, self._task = None, None
