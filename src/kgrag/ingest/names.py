"""How names (file paths, sources, document names) are shown and matched.

A file name is data: it may hold bytes that are not UTF-8, newlines,
other control characters or invisible format characters. Whatever prints
or returns a name goes through :func:`display_name`, which leaves ordinary
names as they are and escapes the rest, so a name is always one line:

* ``\\n``, ``\\r`` and ``\\t`` as those two characters;
* a byte that is not UTF-8 (Python keeps it as a surrogate escape) as
  ``\\xNN``, the byte itself;
* other control, format, surrogate, private-use and line/paragraph
  separator characters as ``\\xNN``, ``\\uNNNN`` or ``\\UNNNNNNNN``.

Backslashes are not doubled, so an ordinary name never changes; the cost
is that two names may display alike, which :func:`records_named` reports
as an ambiguity instead of choosing one.

A document is shown by :func:`document_name`: its path relative to the
folder that was indexed (or its file name), else the path or id the
caller gave it. :func:`records_named` finds the documents a name given
back stands for: an id, a source or path, or a name as listed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

# display_name is defined with the errors, whose messages show names escaped too
from kgrag.errors import display_name
from kgrag.types import DocRecord

__all__ = ["UNNAMED", "display_name", "document_name", "is_text", "records_named"]

UNNAMED = "unknown_source"  # the file path of a raw text given none


def is_text(name: str) -> bool:
    """Whether ``name`` is valid Unicode text (a file name of bytes that are not UTF-8 is not)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def document_name(record: DocRecord) -> str:
    """How a document is named in listings: its relative path, file name or given path, escaped."""
    source = record.source
    for name in (
        record.relative_path,
        os.path.basename(source) if source and os.path.isabs(source) else None,
        record.file_path if record.file_path != UNNAMED else None,
        source,
    ):
        if name:
            return display_name(name)
    return record.id


def records_named(given: str, records: Iterable[DocRecord]) -> list[DocRecord]:
    """The documents ``given`` names, from the first rule that matches any.

    Rules, in order: the id; the source or path (as given, or resolved like
    at index time); the relative path or name as listed (escaped or not).
    More than one record means the name is ambiguous: the caller decides.
    """
    records = list(records)
    real = _real(given)
    rules: list[Callable[[DocRecord], bool]] = [
        lambda r: r.id == given,
        lambda r: bool({r.source, r.file_path} & {given, real} - {None}),
        lambda r: given in (r.relative_path, document_name(r)),
    ]
    for rule in rules:
        hits = [r for r in records if rule(r)]
        if hits:
            return hits
    return []


def _real(given: str) -> str | None:
    try:
        return os.path.realpath(given)
    except (OSError, ValueError):  # a NUL byte, a name too long
        return None
