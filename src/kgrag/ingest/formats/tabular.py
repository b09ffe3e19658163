"""Rows of a sheet (.xlsx, .csv) as self-describing lines under a section.

Every data row becomes one line that names its columns, ``Name: Alice;
Team: Ops``, so a chunk cut anywhere in a long sheet can be read alone.
The first non-empty row is taken as the header when the caller's test
says so (and a later row exists); otherwise columns are named by the
caller (``column 3`` for CSV, the letter ``C`` for a spreadsheet). Empty
cells are left out of the line and rows with no value at all are dropped.

A sheet is one heading (level 1, the sheet's name) and one table block
whose rows are those lines (each row one cell: the labelled line). Lines
are produced lazily and the running text length is checked as they come,
so a huge sheet is refused by ``max_document_chars`` before it is all in
memory.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator, Sequence

from kgrag.ingest.blocks import BlockBuilder

PAIR_SEP, NAME_SEP = "; ", ": "
Check = Callable[[int], None]


def cell_text(value: object) -> str:
    """A cell value as a reader would see it: ``3`` not ``3.0``, dates ISO, booleans upper case."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return " ".join(str(value).split())


def label(names: Sequence[str], row: Sequence[str], column: Callable[[int], str]) -> str:
    """``Name: Alice; Team: Ops``: each non-empty value after its column's name."""
    pairs = []
    for i, value in enumerate(row):
        if value:
            name = names[i] if i < len(names) and names[i] else column(i)
            pairs.append(f"{name}{NAME_SEP}{value}")
    return PAIR_SEP.join(pairs)


def _filled(rows: Iterable[Sequence[object]]) -> Iterator[tuple[Sequence[object], list[str]]]:
    """``(raw row, cell texts)`` of the rows holding at least one value."""
    for raw in rows:
        texts = [cell_text(v) for v in raw]
        if any(texts):
            yield raw, texts


def labelled_lines(
    rows: Iterable[Sequence[object]],
    is_header: Callable[[Sequence[object]], bool],
    column: Callable[[int], str],
) -> Iterator[str]:
    """One labelled line per non-empty row; the first names the columns if ``is_header(raw row)``."""
    filled = _filled(rows)
    first = next(filled, None)
    if first is None:
        return
    second = next(filled, None)
    names: list[str] = []
    if second is not None and is_header(first[0]):
        names = first[1]
    else:
        yield label(names, first[1], column)
    if second is not None:
        yield label(names, second[1], column)
    for _, texts in filled:
        yield label(names, texts, column)


def add_sheet(
    builder: BlockBuilder, title: str, lines: Iterable[str], check: Check | None = None
) -> int:
    """A level-1 heading ``title`` and a table of ``lines``; returns the number of rows."""
    kept: list[tuple[str]] = []
    length = builder.length + len(title)
    for line in lines:
        kept.append((line,))
        length += len(line) + 1
        if check is not None and len(kept) % 256 == 0:
            check(length)
    if check is not None:
        check(length)
    if kept:
        builder.heading(title, 1)
        builder.table(kept)
    return len(kept)
