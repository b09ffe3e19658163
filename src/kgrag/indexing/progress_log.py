"""Progress as plain lines, for output that is not a terminal (a log, a pipe, CI).

A live bar redraws one line in place; written to a file it becomes one
truncated line (``inde… … chunks extracted 43/43 … llm cal…``).
:class:`LineProgress` instead prints whole lines, each readable alone:
one when the run starts, one each time another tenth of the documents is
done, at most one every ``interval_s`` seconds while work goes on, one
for a failed document, and the last one when the run ends. No carriage
return, no colour, no width.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from kgrag.indexing.progress import ProgressCounts

INTERVAL_S = 10.0
STEPS = 10  # a line each time another tenth of the documents is done


def describe_plain(counts: ProgressCounts, llm_calls: int) -> str:
    """``indexing: 3/10 documents  chunks extracted 43/120  records: ...``: the bar's words."""
    failed = f"  failed {counts.documents_failed}" if counts.documents_failed else ""
    return (
        f"indexing: {counts.documents_done}/{counts.documents} documents  "
        f"chunks extracted {counts.chunks_extracted}/{counts.chunks}  "
        f"records: {counts.entities} entities, {counts.relations} relations  "
        f"llm calls {llm_calls}{failed}"
    )


class LineProgress:
    """A :class:`~kgrag.indexing.progress.ProgressSink` printing a plain line per interval."""

    def __init__(
        self,
        llm_calls: Callable[[], int],
        *,
        interval_s: float = INTERVAL_S,
        out: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._llm_calls, self._interval_s, self._clock = llm_calls, interval_s, clock
        self._out = out  # None: sys.stderr at the time of printing
        self.counts = ProgressCounts()
        self._started = self._last = clock()
        self._step = 0  # tenths of the documents reported so far
        self._printed: str | None = None

    def start(self, documents: int) -> None:
        self.counts.start(documents)
        self._started = self._clock()
        self._print()

    def chunks_found(self, count: int) -> None:
        self.counts.chunks_found(count)
        self._maybe()

    def chunk_extracted(self, entities: int, relations: int) -> None:
        self.counts.chunk_extracted(entities, relations)
        self._maybe()

    def document_done(self, ok: bool) -> None:
        self.counts.document_done(ok)
        total = max(self.counts.documents, 1)
        step = self.counts.documents_done * STEPS // total
        if step > self._step or not ok:
            self._step = max(step, self._step)
            self._print()
        else:
            self._maybe()

    def stop(self) -> None:
        self._print()

    def _maybe(self) -> None:
        if self._clock() - self._last >= self._interval_s:
            self._print()

    def _print(self) -> None:
        now = self._clock()
        self._last = now
        line = describe_plain(self.counts, self._llm_calls())
        if line == self._printed:
            return  # nothing moved since the last line
        self._printed = line
        print(f"{line}  {now - self._started:.0f} s", file=self._out or sys.stderr, flush=True)
