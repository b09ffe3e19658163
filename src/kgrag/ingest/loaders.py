"""Turn files and folders into :class:`~kgrag.types.Document` objects.

:func:`load_paths` never stops at a bad file: every file that cannot be
used (unsupported type, unreadable, corrupt, empty, over a limit, a
symlink leaving the folder) becomes a :class:`~kgrag.errors.LoaderError`
in the report and the batch goes on. Folders are walked recursively in
sorted order (:mod:`kgrag.ingest.walk`); hidden files and folders (names
starting with ``.``) inside them are skipped.

Limits and choices come in one :class:`~kgrag.ingest.options.LoadOptions`.
Before a file is parsed, :mod:`kgrag.ingest.guard` checks its size (and,
for zip-based formats, the archive's decompression budgets); text is
decoded by :mod:`kgrag.ingest.encoding`. What had to be guessed (an
encoding) lands in :attr:`Document.warnings <kgrag.types.Document.warnings>`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kgrag.errors import LoaderError
from kgrag.ingest import guard
from kgrag.ingest.encoding import UndecodableError, decode_bytes
from kgrag.ingest.html_text import declared_charset, html_to_text
from kgrag.ingest.ids import source_doc_id
from kgrag.ingest.options import LoadOptions
from kgrag.ingest.walk import iter_entries
from kgrag.types import Document

TEXT_SUFFIXES = (".txt", ".text", ".md", ".markdown", ".rst", ".log")
DEFAULT_OPTIONS = LoadOptions()


@dataclass(slots=True)
class LoadReport:
    """What one :func:`load_paths` call produced."""

    documents: list[Document] = field(default_factory=list)
    errors: list[LoaderError] = field(default_factory=list)


@dataclass(slots=True)
class Loaded:
    """A format loader's result: the text and what it had to guess or drop."""

    text: str
    warnings: list[str] = field(default_factory=list)


Loader = Callable[[Path, LoadOptions], Loaded]


@dataclass(frozen=True, slots=True)
class Format:
    """How one file type is read; ``zip_based`` formats get the zip budgets first."""

    load: Loader
    zip_based: bool = False


def decode_text(data: bytes, encoding: str | None = None) -> str:
    """Decode bytes of unknown (or the given) encoding; line ends become ``\\n``."""
    return _newlines(decode_bytes(data, override=encoding).text)


def _newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _decode(path: Path, data: bytes, options: LoadOptions,
            declared: str | None = None) -> Loaded:
    try:
        decoded = decode_bytes(data, override=options.encoding, declared=declared)
    except UndecodableError as exc:
        raise LoaderError(str(path), str(exc)) from exc
    return Loaded(_newlines(decoded.text), decoded.warnings)


def load_text(path: Path, options: LoadOptions = DEFAULT_OPTIONS) -> Loaded:
    """Plain text or markup read as text (``.txt``, ``.md``, ...)."""
    return _decode(path, guard.read_bounded(path, options), options)


def load_html(path: Path, options: LoadOptions = DEFAULT_OPTIONS) -> Loaded:
    """Visible text of an HTML page (its declared charset honoured), blocks on their own lines."""
    data = guard.read_bounded(path, options)
    loaded = _decode(path, data, options, declared=declared_charset(data))
    loaded.text = html_to_text(loaded.text)
    return loaded


def load_pdf(path: Path, options: LoadOptions = DEFAULT_OPTIONS) -> Loaded:
    """Text of every page of a PDF (pypdf), pages separated by blank lines.

    Extraction stops as soon as the text passes ``max_document_chars``.
    """
    from pypdf import PdfReader

    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted and not reader.decrypt(""):
            raise LoaderError(str(path), "PDF is encrypted with a password")
        pages = _pdf_pages(path, reader, options)
    except LoaderError:
        raise
    except Exception as exc:  # pypdf raises many kinds on damaged files
        raise LoaderError(str(path), f"unreadable or corrupt PDF: {exc}") from exc
    return Loaded("\n\n".join(pages))


def _pdf_pages(path: Path, reader, options: LoadOptions) -> list[str]:
    pages: list[str] = []
    length = 0
    for page in reader.pages:
        text = (page.extract_text() or "").strip()
        if text:
            pages.append(text)
            length += len(text) + 2
            guard.check_length(path, length, options)
    return pages


def load_docx(path: Path, options: LoadOptions = DEFAULT_OPTIONS) -> Loaded:
    """Paragraphs and tables of a .docx file, in document order."""
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(str(path))
        blocks: list[str] = []
        for item in document.iter_inner_content():
            if isinstance(item, Paragraph):
                blocks.append(item.text)
            elif isinstance(item, Table):
                blocks.append(_table_text(item))
    except Exception as exc:  # zipfile / lxml / python-docx errors
        raise LoaderError(str(path), f"unreadable or corrupt .docx: {exc}") from exc
    return Loaded("\n".join(b for b in blocks if b.strip()))


def _table_text(table) -> str:
    """One line per row, cells joined by `` | ``; merged cells once."""
    lines = []
    for row in table.rows:
        cells: list[str] = []
        previous = None
        for cell in row.cells:
            if previous is not None and cell._tc is previous:
                continue  # a merged cell repeats itself across the span
            previous = cell._tc
            cells.append(" ".join(cell.text.split()))
        if any(cells):
            lines.append(" | ".join(cells))
    return "\n".join(lines)


FORMATS: dict[str, Format] = {
    **{suffix: Format(load_text) for suffix in TEXT_SUFFIXES},
    ".html": Format(load_html),
    ".htm": Format(load_html),
    ".pdf": Format(load_pdf),
    ".docx": Format(load_docx, zip_based=True),
}


def register_format(suffixes: Iterable[str], load: Loader, *, zip_based: bool = False) -> None:
    """Teach :func:`load_file` a file type (``zip_based``: .pptx, .xlsx, .epub, .odt...)."""
    for suffix in suffixes:
        FORMATS[suffix.lower()] = Format(load, zip_based)


def supported_suffixes() -> list[str]:
    """File name endings :func:`load_file` understands."""
    return sorted(FORMATS)


def load_file(path: str | os.PathLike[str], options: LoadOptions | None = None) -> Document:
    """Load one file; raises :class:`LoaderError` when it cannot be used."""
    options = options or DEFAULT_OPTIONS
    name = os.fspath(path)
    p = Path(name)
    fmt = FORMATS.get(p.suffix.lower())
    if fmt is None:
        raise LoaderError(name, f"unsupported file type {p.suffix or '(none)'!r}; "
                                f"supported: {', '.join(supported_suffixes())}")
    guard.check_file(p, options)
    if fmt.zip_based:
        guard.check_zip(p, options, p.suffix.lower())
    loaded = fmt.load(p, options)
    if not loaded.text.strip():
        raise LoaderError(name, "the file contains no text")
    guard.check_text(p, loaded.text, options)
    source = str(p.resolve())
    return Document(id=source_doc_id(source), content=loaded.text, file_path=source,
                    source=source, warnings=loaded.warnings)


def load_paths(paths: Iterable[str | os.PathLike[str]],
               options: LoadOptions | None = None) -> LoadReport:
    """Load files and folders; bad files become errors, the rest go on.

    A file reached twice (named twice, or through a link inside the folder)
    is loaded once.
    """
    options = options or DEFAULT_OPTIONS
    report = LoadReport()
    seen: set[str] = set()
    for given in paths:
        name = os.fspath(given)
        if not os.path.exists(name):
            report.errors.append(LoaderError(name, "no such file or folder"))
            continue
        for entry in iter_entries(name, options):
            if isinstance(entry, LoaderError):
                report.errors.append(entry)
            elif (real := os.path.realpath(entry)) not in seen:
                seen.add(real)
                _load_into(report, entry, options)
    return report


def _load_into(report: LoadReport, name: str, options: LoadOptions) -> None:
    try:
        report.documents.append(load_file(name, options))
    except LoaderError as exc:
        report.errors.append(exc)
