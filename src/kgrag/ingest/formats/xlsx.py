"""XLSX through openpyxl in read-only mode: each sheet a section of labelled rows.

The workbook is opened with ``read_only=True`` (rows are streamed from the
sheet's XML, never held as a grid of cell objects) and ``data_only=True``
(formulas give the value Excel last computed and saved; a formula never
computed, as in files written by scripts, has none and is left out).
The sheet's declared dimensions are ignored (``reset_dimensions``): a
file claiming ``A1:XFD1048576`` costs only the cells it really holds.
Rows become ``Header: value; ...`` lines (:mod:`.tabular`); a first row
of text only is the header, otherwise columns are named by their letter.
Chart sheets and empty sheets contribute nothing.

openpyxl opens the zip itself, so it gets the file only once every member
has inflated through the bounded archive reader
(:meth:`~kgrag.ingest.archive.Archive.verified_bytes`).
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol

from kgrag.errors import LoaderError
from kgrag.ingest.archive import Archive
from kgrag.ingest.blocks import BlockBuilder, Parsed
from kgrag.ingest.formats.tabular import Check, add_sheet, labelled_lines


def text_header(row: Sequence[object]) -> bool:
    """A header row holds text only (numbers, dates and booleans are data)."""
    values = [v for v in row if v is not None and v != ""]
    return bool(values) and all(isinstance(v, str) for v in values)


def _letter(index: int) -> str:
    from openpyxl.utils import get_column_letter

    letter: str = get_column_letter(index + 1)
    return letter


class _Sheet(Protocol):
    """What is read of an openpyxl worksheet (openpyxl ships no types)."""

    title: str

    def iter_rows(self, *, values_only: bool) -> Iterator[tuple[object, ...]]: ...


class _Workbook(Protocol):
    worksheets: list[_Sheet]

    def close(self) -> None: ...


def _open(archive: Archive, name: str) -> _Workbook:
    from openpyxl import load_workbook

    data = archive.verified_bytes()  # openpyxl opens the zip itself
    try:
        workbook: _Workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        return workbook
    except Exception as exc:  # zipfile, lxml, KeyError for missing parts, InvalidFileException
        raise LoaderError(name, f"unreadable or corrupt .xlsx: {exc}") from exc


def parse_xlsx(source: Archive | Path, name: str = "<xlsx>", check: Check | None = None) -> Parsed:
    """Blocks and flat text of a workbook: one heading and one table per non-empty sheet.

    ``check(length)`` is called as rows stream in (a size limit that raises
    stops the reading early).
    """
    workbook = _open(Archive.of(source, name, ".xlsx"), name)
    builder = BlockBuilder()
    try:
        for sheet in workbook.worksheets:
            if hasattr(sheet, "reset_dimensions"):  # chart sheets have no rows
                sheet.reset_dimensions()  # rows as stored, not padded to a declared size
            rows = sheet.iter_rows(values_only=True)
            add_sheet(builder, sheet.title, labelled_lines(rows, text_header, _letter), check)
    except LoaderError:
        raise
    except Exception as exc:  # damaged sheet XML, bad shared-string index, ...
        raise LoaderError(name, f"unreadable or corrupt .xlsx: {exc}") from exc
    finally:
        workbook.close()
    return builder.build()
