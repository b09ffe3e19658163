"""CSV and TSV through the standard library: one section of labelled rows.

The dialect (delimiter among ``, ; TAB |``, quote character) is sniffed
from the first 64 KiB; ``.tsv`` files are tab-separated. The text arrives
already decoded by the loader's encoding detection. The first row is the
header when :class:`csv.Sniffer` says so, or when its cells are all
filled, distinct and not numbers; otherwise columns are ``column 1``,
``column 2``... The section heading is the file's name without suffix.
(Module named ``csv_table`` so that it does not shadow :mod:`csv`.)
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from pathlib import PurePath

from kgrag.errors import LoaderError
from kgrag.ingest.blocks import BlockBuilder, Parsed
from kgrag.ingest.formats.tabular import Check, add_sheet, labelled_lines

SAMPLE_CHARS = 64 * 1024
DELIMITERS = ",;\t|"
_NUMBER = re.compile(r"[-+]?[\d.,\s]*\d[\d.,\s]*%?")


def _dialect(sample: str, tabs: bool) -> type[csv.Dialect] | csv.Dialect:
    if tabs:
        return csv.excel_tab
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITERS)
    except csv.Error:  # one column, or nothing to tell delimiters apart
        return csv.excel


def looks_like_header(row: Sequence[object]) -> bool:
    """Every cell filled, no two alike and none a number."""
    cells = [str(c).strip() for c in row]
    return (
        all(cells)
        and len(set(cells)) == len(cells)
        and not any(_NUMBER.fullmatch(c) for c in cells)
    )


def _sniffed_header(sample: str, dialect: type[csv.Dialect] | csv.Dialect) -> bool:
    try:
        return csv.Sniffer().has_header(sample) if dialect is not csv.excel_tab else False
    except csv.Error:
        return False


def parse_csv(text: str, name: str = "<csv>", check: Check | None = None) -> Parsed:
    """Blocks and flat text of a CSV / TSV file: a heading and one labelled row per line."""
    path = PurePath(name)
    sample = text[:SAMPLE_CHARS]
    dialect = _dialect(sample, path.suffix.lower() == ".tsv")
    sniffed = _sniffed_header(sample, dialect)
    builder = BlockBuilder()
    rows = csv.reader(io.StringIO(text, newline=""), dialect)
    try:
        add_sheet(
            builder,
            path.stem or name,
            labelled_lines(
                rows, lambda row: sniffed or looks_like_header(row), lambda i: f"column {i + 1}"
            ),
            check,
        )
    except csv.Error as exc:  # a field over csv.field_size_limit(), NUL bytes, ...
        raise LoaderError(name, f"malformed CSV: {exc}") from exc
    return builder.build()
