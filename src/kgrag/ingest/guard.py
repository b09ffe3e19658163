"""Refuse hostile or oversized inputs before they cost memory or time.

* :func:`check_file` — the file is a regular file within ``max_file_bytes``
  (``stat``, before a byte is read);
* :func:`read_bounded` — read it, never more than the limit even if it grew;
* :func:`check_zip` — the decompression budgets of a zip-based format
  (.docx, .pptx, .xlsx, .epub, .odt; any format registered as zip-based):
  entry count, total and per-member uncompressed size and compression
  ratio, all from the archive's end record and central directory, before
  anything is inflated. Those sizes are only *declared*: a forged
  directory can claim 4,000 bytes for a gigabyte, and :mod:`zipfile`
  inflates a whole member in one call before it notices. The formats
  therefore read members only through :class:`~kgrag.ingest.archive.Archive`,
  which counts what really inflates and stops at the same budgets;
* :func:`check_text` — the extracted text within ``max_document_chars``.

Every refusal is a :class:`~kgrag.errors.LoaderError` naming the file and
the limit (and the setting that raises it).
"""

from __future__ import annotations

import os
import stat
import struct
import zipfile
from pathlib import Path

from kgrag.errors import LoaderError
from kgrag.ingest.options import LoadOptions

_EOCD = b"PK\x05\x06"  # end of central directory record
_EOCD_SIZE = 22
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_EOCD = b"PK\x06\x06"
_RATIO_FLOOR = 1024 * 1024  # entries smaller than this are not ratio-checked
# A central directory bigger than this per allowed entry is refused before it
# is parsed (a record is 46 bytes plus name, extra field and comment).
_CD_BYTES_PER_ENTRY = 1024


def size_text(n: float) -> str:
    """``n`` bytes as a short human figure (``1.5 GiB``)."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


def check_file(path: Path, options: LoadOptions) -> os.stat_result:
    """``stat`` the file: it must exist, be regular and fit ``max_file_bytes``."""
    try:
        info = path.stat()
    except FileNotFoundError as exc:
        raise LoaderError(str(path), "no such file") from exc
    except OSError as exc:  # ELOOP, EACCES, ...
        raise LoaderError(str(path), f"cannot read file: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(info.st_mode):
        raise LoaderError(str(path), "not a regular file (device, pipe or socket)")
    if info.st_size > options.max_file_bytes:
        raise LoaderError(
            str(path),
            f"file is {size_text(info.st_size)}, over the "
            f"{size_text(options.max_file_bytes)} limit (max_file_bytes)",
        )
    return info


def read_bounded(path: Path, options: LoadOptions) -> bytes:
    """The file's bytes; refused if it holds more than ``max_file_bytes``."""
    limit = options.max_file_bytes
    try:
        with path.open("rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise LoaderError(str(path), f"cannot read file: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise LoaderError(
            str(path),
            f"file grew over the {size_text(limit)} limit (max_file_bytes) while being read",
        )
    return data


def check_text(path: Path, text: str, options: LoadOptions) -> str:
    """``text`` unchanged, or refused when over ``max_document_chars``."""
    check_length(path, len(text), options)
    return text


def check_length(path: Path, length: int, options: LoadOptions) -> None:
    """Refuse text of ``length`` characters when over ``max_document_chars``.

    Extractors that build text piece by piece call it as they go, so a huge
    document is refused before all of it is in memory.
    """
    if length > options.max_document_chars:
        raise LoaderError(
            str(path),
            f"text is over the {options.max_document_chars:,} character "
            "limit (max_document_chars); refused, not truncated",
        )


def check_zip(path: Path, options: LoadOptions, kind: str) -> None:
    """Refuse an archive over a decompression budget; nothing is inflated.

    ``kind`` names the format in messages (``".docx"``).
    """
    entries, directory_bytes = _end_record(path, kind)
    _check_entries(path, entries, options, kind)
    if directory_bytes > options.zip_max_entries * _CD_BYTES_PER_ENTRY:
        raise LoaderError(
            str(path),
            f"{kind} archive's central directory is "
            f"{size_text(directory_bytes)}, too big for "
            f"{options.zip_max_entries:,} entries (zip_max_entries)",
        )
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise LoaderError(str(path), f"unreadable or corrupt {kind}: {exc}") from exc
    check_zip_infos(path, infos, options, kind)


def check_zip_infos(
    path: Path, infos: list[zipfile.ZipInfo], options: LoadOptions, kind: str
) -> None:
    """The budgets against the sizes a central directory declares.

    Declared sizes can lie; :class:`~kgrag.ingest.archive.Archive` counts
    what really inflates.
    """
    _check_entries(path, len(infos), options, kind)
    _check_sizes(path, infos, options, kind)


def _check_entries(path: Path, entries: int, options: LoadOptions, kind: str) -> None:
    if entries > options.zip_max_entries:
        raise LoaderError(
            str(path),
            f"{kind} archive has {entries:,} entries, over the "
            f"{options.zip_max_entries:,} limit (zip_max_entries)",
        )


def _check_sizes(path: Path, infos: list[zipfile.ZipInfo], options: LoadOptions, kind: str) -> None:
    """Total uncompressed size and compression ratios, as the central directory declares."""
    total = sum(i.file_size for i in infos)
    if total > options.zip_max_total_bytes:
        raise LoaderError(
            str(path),
            f"{kind} archive would inflate to {size_text(total)}, over "
            f"the {size_text(options.zip_max_total_bytes)} limit "
            "(zip_max_total_bytes)",
        )
    biggest = max(infos, key=lambda i: i.file_size, default=None)
    if biggest is not None and biggest.file_size > options.zip_max_member_bytes:
        raise LoaderError(
            str(path),
            f"{kind} archive member {biggest.filename!r} would inflate to "
            f"{size_text(biggest.file_size)}, over the "
            f"{size_text(options.zip_max_member_bytes)} limit (zip_max_member_bytes)",
        )
    for ratio, what in _ratios(infos, total):
        if ratio > options.zip_max_ratio:
            raise LoaderError(
                str(path),
                f"{kind} archive looks like a zip bomb: {what} "
                f"compresses {ratio:,.0f}:1, over the "
                f"{options.zip_max_ratio:g}:1 limit (zip_max_ratio)",
            )


def _ratios(infos: list[zipfile.ZipInfo], total: int) -> list[tuple[float, str]]:
    """Compression ratio of the whole archive and of its most compressed big entry.

    Archives and entries under 1 MiB inflated are not judged: small XML
    parts compress well and cannot hurt.
    """
    out = []
    if total >= _RATIO_FLOOR:
        out.append((total / max(sum(i.compress_size for i in infos), 1), "the archive"))
    big = [i for i in infos if i.file_size >= _RATIO_FLOOR]
    if big:
        worst = max(big, key=lambda i: i.file_size / max(i.compress_size, 1))
        out.append((worst.file_size / max(worst.compress_size, 1), f"entry {worst.filename!r}"))
    return out


def _end_record(path: Path, kind: str) -> tuple[int, int]:
    """(entry count, central directory bytes) from the end record, ZIP64 aware."""
    size = path.stat().st_size
    with path.open("rb") as f:
        f.seek(max(0, size - _EOCD_SIZE - 65535))  # the record plus the longest comment
        tail = f.read()
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) - at < _EOCD_SIZE:
        raise LoaderError(
            str(path),
            f"unreadable or corrupt {kind}: not a zip archive (no end of central directory)",
        )
    entries, directory_bytes = struct.unpack_from("<HL", tail, at + 10)
    locator = at - 20
    if locator >= 0 and tail[locator : locator + 4] == _ZIP64_LOCATOR:
        big_entries, big_bytes = _zip64_record(path, tail, locator)
        entries, directory_bytes = max(entries, big_entries), max(directory_bytes, big_bytes)
    return entries, directory_bytes


def _zip64_record(path: Path, tail: bytes, locator: int) -> tuple[int, int]:
    """(entries, central directory bytes) of the ZIP64 end record; zeros if unreadable."""
    (offset,) = struct.unpack_from("<Q", tail, locator + 8)
    with path.open("rb") as f:
        f.seek(offset)
        record = f.read(56)
    if len(record) < 56 or record[:4] != _ZIP64_EOCD:
        return 0, 0
    entries, directory_bytes = struct.unpack_from("<QQ", record, 32)
    return entries, directory_bytes
