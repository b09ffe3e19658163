"""Turn files and folders into :class:`~kgrag.types.Document` objects.

:func:`load_paths` never stops at a bad file: every file that cannot be
used (unsupported type, unreadable, corrupt, empty) becomes a
:class:`~kgrag.errors.LoaderError` in the report and the batch goes on.
Folders are walked recursively in sorted order; hidden files and folders
(names starting with ``.``) inside them are skipped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from kgrag.errors import LoaderError
from kgrag.ingest.html_text import html_to_text
from kgrag.ingest.ids import source_doc_id
from kgrag.types import Document

TEXT_SUFFIXES = (".txt", ".text", ".md", ".markdown", ".rst", ".log")


@dataclass(slots=True)
class LoadReport:
    """What one :func:`load_paths` call produced."""

    documents: list[Document] = field(default_factory=list)
    errors: list[LoaderError] = field(default_factory=list)


def decode_text(data: bytes) -> str:
    """Decode bytes of unknown encoding and normalise line ends to ``\\n``.

    Order: BOMs (UTF-8, UTF-32, UTF-16), then strict UTF-8, then cp1252,
    then latin-1 (which accepts any byte string).
    """
    if data.startswith(b"\xef\xbb\xbf"):
        text = data.decode("utf-8-sig", errors="replace")
    elif data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        text = data.decode("utf-32", errors="replace")
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", errors="replace")
    else:
        text = _decode_no_bom(data)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _decode_no_bom(data: bytes) -> str:
    for encoding in ("utf-8", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise LoaderError(str(path), f"cannot read file: {exc.strerror or exc}") from exc


def load_text(path: Path) -> str:
    """Plain text or markup read as text (``.txt``, ``.md``, ...)."""
    data = _read_bytes(path)
    if b"\x00" in data and not data.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
        raise LoaderError(str(path), "looks like a binary file, not text")
    return decode_text(data)


def load_html(path: Path) -> str:
    """Visible text of an HTML page, block elements on their own lines."""
    return html_to_text(decode_text(_read_bytes(path)))


def load_pdf(path: Path) -> str:
    """Text of every page of a PDF (pypdf), pages separated by blank lines."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted and not reader.decrypt(""):
            raise LoaderError(str(path), "PDF is encrypted with a password")
        pages = [page.extract_text() or "" for page in reader.pages]
    except LoaderError:
        raise
    except Exception as exc:  # pypdf raises many kinds on damaged files
        raise LoaderError(str(path), f"unreadable or corrupt PDF: {exc}") from exc
    return "\n\n".join(p.strip() for p in pages if p.strip())


def load_docx(path: Path) -> str:
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
    return "\n".join(b for b in blocks if b.strip())


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


LOADERS: dict[str, Callable[[Path], str]] = {
    **{suffix: load_text for suffix in TEXT_SUFFIXES},
    ".html": load_html,
    ".htm": load_html,
    ".pdf": load_pdf,
    ".docx": load_docx,
}


def supported_suffixes() -> list[str]:
    """File name endings :func:`load_file` understands."""
    return sorted(LOADERS)


def load_file(path: str | os.PathLike[str]) -> Document:
    """Load one file; raises :class:`LoaderError` when it cannot be used."""
    name = os.fspath(path)
    p = Path(name)
    loader = LOADERS.get(p.suffix.lower())
    if loader is None:
        raise LoaderError(name, f"unsupported file type {p.suffix or '(none)'!r}; "
                                f"supported: {', '.join(supported_suffixes())}")
    if not p.is_file():
        raise LoaderError(name, "no such file")
    content = loader(p)
    if not content.strip():
        raise LoaderError(name, "the file contains no text")
    source = str(p.resolve())
    return Document(id=source_doc_id(source), content=content, file_path=source, source=source)


def iter_files(path: str | os.PathLike[str]) -> Iterable[str]:
    """The path itself, or every visible file under a folder in sorted order."""
    name = os.fspath(path)
    if not os.path.isdir(name):
        yield name
        return
    for root, dirs, files in os.walk(name):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for f in sorted(files):
            if not f.startswith("."):
                yield os.path.join(root, f)


def load_paths(paths: Iterable[str | os.PathLike[str]]) -> LoadReport:
    """Load files and folders; bad files become errors, the rest go on."""
    report = LoadReport()
    for given in paths:
        if not os.path.exists(given):
            report.errors.append(LoaderError(os.fspath(given), "no such file or folder"))
            continue
        for name in iter_files(given):
            try:
                report.documents.append(load_file(name))
            except LoaderError as exc:
                report.errors.append(exc)
    return report
