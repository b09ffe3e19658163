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

Each format is parsed by :mod:`kgrag.ingest.formats` into a flat text and
its blocks (headings, paragraphs, tables, pages; see
docs/ingestion-structure.md), which travel on :attr:`Document.blocks`.
:data:`FORMATS` maps a suffix to its loader (docs/ingestion-formats.md
lists them); :func:`register_format` adds one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kgrag.errors import LoaderError
from kgrag.ingest import guard
from kgrag.ingest.archive import Archive
from kgrag.ingest.blocks import Block, Parsed
from kgrag.ingest.encoding import UndecodableError, decode_bytes
from kgrag.ingest.formats.code import LANGUAGES, parse_code
from kgrag.ingest.formats.csv_table import parse_csv
from kgrag.ingest.formats.docx import parse_docx
from kgrag.ingest.formats.epub import parse_epub
from kgrag.ingest.formats.html import parse_html
from kgrag.ingest.formats.json_records import parse_json
from kgrag.ingest.formats.markdown import parse_markdown
from kgrag.ingest.formats.odt import parse_odt
from kgrag.ingest.formats.pdf import parse_pdf
from kgrag.ingest.formats.pptx import parse_pptx
from kgrag.ingest.formats.rtf import parse_rtf
from kgrag.ingest.formats.text import parse_text
from kgrag.ingest.formats.xlsx import parse_xlsx
from kgrag.ingest.formats.xml_doc import parse_xml_document
from kgrag.ingest.html_text import declared_charset
from kgrag.ingest.ids import source_doc_id
from kgrag.ingest.names import is_text
from kgrag.ingest.options import LoadOptions
from kgrag.ingest.walk import iter_entries, not_text
from kgrag.types import Document

TEXT_SUFFIXES = (".txt", ".text", ".md", ".markdown", ".rst", ".log")
MARKDOWN_SUFFIXES = (".md", ".markdown")
DEFAULT_OPTIONS = LoadOptions()


@dataclass(slots=True)
class LoadReport:
    """What one :func:`load_paths` call produced."""

    documents: list[Document] = field(default_factory=list)
    errors: list[LoaderError] = field(default_factory=list)


@dataclass(slots=True)
class Loaded:
    """A format loader's result: the text, what it had to guess or drop, and its blocks."""

    text: str
    warnings: list[str] = field(default_factory=list)
    # Structure over ``text`` (kgrag.ingest.blocks); None: chunked as plain text.
    blocks: list[Block] | None = None

    def parsed(self, parsed: Parsed) -> Loaded:
        """This result with a format parser's text, blocks and warnings."""
        return Loaded(parsed.content, [*self.warnings, *parsed.warnings], parsed.blocks)


Loader = Callable[[Path, LoadOptions], Loaded]
Check = Callable[[int], None]


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


def _decode(path: Path, data: bytes, options: LoadOptions, declared: str | None = None) -> Loaded:
    try:
        decoded = decode_bytes(data, override=options.encoding, declared=declared)
    except UndecodableError as exc:
        raise LoaderError(str(path), str(exc)) from exc
    return Loaded(_newlines(decoded.text), decoded.warnings)


def load_text(path: Path, options: LoadOptions = DEFAULT_OPTIONS) -> Loaded:
    """Plain text (paragraph blocks) or Markdown (``.md``, ``.markdown``: parsed into blocks)."""
    loaded = _decode(path, guard.read_bounded(path, options), options)
    if path.suffix.lower() in MARKDOWN_SUFFIXES:
        return loaded.parsed(parse_markdown(loaded.text))
    return loaded.parsed(parse_text(loaded.text))


def load_html(path: Path, options: LoadOptions = DEFAULT_OPTIONS) -> Loaded:
    """The main content of an HTML page (its declared charset honoured) in blocks."""
    data = guard.read_bounded(path, options)
    loaded = _decode(path, data, options, declared=declared_charset(data))
    return loaded.parsed(parse_html(loaded.text))


def load_pdf(path: Path, options: LoadOptions = DEFAULT_OPTIONS) -> Loaded:
    """Text of a PDF per page (pypdf), running headers / footers dropped, in blocks.

    Extraction stops as soon as the text passes ``max_document_chars``.
    """
    return Loaded("").parsed(
        parse_pdf(path, str(path), check=lambda length: guard.check_length(path, length, options))
    )


def _check(path: Path, options: LoadOptions) -> Check:
    """The ``max_document_chars`` check a streaming parser calls as its text grows."""
    return lambda length: guard.check_length(path, length, options)


def archive_loader(parse: Callable[[Archive, str, Check], Parsed]) -> Loader:
    """A loader for a zip-based format (.docx, .pptx, .xlsx, .epub, .odt).

    The parser reads members only through the bounded :class:`Archive`.
    """

    def load(path: Path, options: LoadOptions = DEFAULT_OPTIONS) -> Loaded:
        archive = Archive(path, options, path.suffix.lower(), str(path))
        return Loaded("").parsed(parse(archive, str(path), _check(path, options)))

    load.__doc__ = parse.__doc__
    return load


def text_loader(parse: Callable[[str, str, Check], Parsed]) -> Loader:
    """A loader for a text format: bytes read and decoded as for .txt, then parsed."""

    def load(path: Path, options: LoadOptions = DEFAULT_OPTIONS) -> Loaded:
        loaded = _decode(path, guard.read_bounded(path, options), options)
        return loaded.parsed(parse(loaded.text, str(path), _check(path, options)))

    load.__doc__ = parse.__doc__
    return load


def load_xml(path: Path, options: LoadOptions = DEFAULT_OPTIONS) -> Loaded:
    """An XML document (its declared encoding honoured): element paths as sections."""
    data = guard.read_bounded(path, options)
    loaded = _decode(path, data, options, declared=declared_charset(data))
    return loaded.parsed(parse_xml_document(loaded.text, str(path), _check(path, options)))


def load_rtf(path: Path, options: LoadOptions = DEFAULT_OPTIONS) -> Loaded:
    """Paragraphs and tables of an RTF document (striprtf)."""
    loaded = _decode(path, guard.read_bounded(path, options), options)
    return loaded.parsed(parse_rtf(loaded.text, str(path)))


def load_code(path: Path, options: LoadOptions = DEFAULT_OPTIONS) -> Loaded:
    """A source or configuration file as one code block (searchable, not extracted)."""
    loaded = _decode(path, guard.read_bounded(path, options), options)
    return loaded.parsed(parse_code(loaded.text, LANGUAGES.get(path.suffix.lower())))


FORMATS: dict[str, Format] = {
    **{suffix: Format(load_text) for suffix in TEXT_SUFFIXES},
    **{suffix: Format(load_code) for suffix in LANGUAGES},
    ".html": Format(load_html),
    ".htm": Format(load_html),
    ".pdf": Format(load_pdf),
    ".docx": Format(archive_loader(parse_docx), zip_based=True),
    ".pptx": Format(archive_loader(parse_pptx), zip_based=True),
    ".xlsx": Format(archive_loader(parse_xlsx), zip_based=True),
    ".epub": Format(archive_loader(parse_epub), zip_based=True),
    ".odt": Format(archive_loader(parse_odt), zip_based=True),
    **{suffix: Format(text_loader(parse_csv)) for suffix in (".csv", ".tsv")},
    **{suffix: Format(text_loader(parse_json)) for suffix in (".json", ".jsonl", ".ndjson")},
    ".xml": Format(load_xml),
    ".rtf": Format(load_rtf),
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
    if not is_text(os.path.realpath(name)):
        raise not_text(name)  # a source is stored as text (kgrag.ingest.walk)
    p = Path(name)
    fmt = FORMATS.get(p.suffix.lower())
    if fmt is None:
        raise LoaderError(
            name,
            f"unsupported file type {p.suffix or '(none)'!r}; "
            f"supported: {', '.join(supported_suffixes())}",
        )
    guard.check_file(p, options)
    if fmt.zip_based:
        guard.check_zip(p, options, p.suffix.lower())
    loaded = fmt.load(p, options)
    if not loaded.text.strip():
        raise LoaderError(name, "the file contains no text")
    guard.check_text(p, loaded.text, options)
    source = str(p.resolve())
    return Document(
        id=source_doc_id(source),
        content=loaded.text,
        file_path=source,
        source=source,
        warnings=loaded.warnings,
        blocks=loaded.blocks,
    )


def load_paths(
    paths: Iterable[str | os.PathLike[str]], options: LoadOptions | None = None
) -> LoadReport:
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
                _load_into(report, entry, options, _relative(entry, name))
    return report


def _relative(entry: str, given: str) -> str:
    """The file's path relative to the folder named (its name, when a file was named)."""
    if os.path.isdir(given):
        return os.path.relpath(entry, given)
    return os.path.basename(entry)


def _load_into(report: LoadReport, name: str, options: LoadOptions, relative: str) -> None:
    try:
        doc = load_file(name, options)
    except LoaderError as exc:
        report.errors.append(exc)
        return
    doc.relative_path = relative
    report.documents.append(doc)
