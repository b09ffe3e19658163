"""Zip members inflated through a counting reader that stops at the budget.

:func:`~kgrag.ingest.guard.check_zip` judges an archive by what its
central directory *declares*; a forged directory can declare 4,000 bytes
for a member that inflates to gigabytes, and :mod:`zipfile`'s ``read()``
inflates the whole compressed stream in one call before it compares
(measured: 1.5 GiB and 2.25 GB RSS before "Bad CRC-32"). So no format
reads a member with ``zipfile`` here. :class:`Archive` inflates each
member itself, in 64 KiB pieces of compressed data and at most 1 MiB of
output per step, and counts what really comes out:

* a member that inflates past the size its directory declares is refused
  as forged the moment it does (the declared size is never trusted to stop
  anything, only compared with);
* past ``zip_max_member_bytes`` (one member) or ``zip_max_total_bytes``
  (the archive, every member counted once) it is refused mid-stream;
* a member that ends early, or whose CRC-32 does not match, is corrupt.

:meth:`Archive.chunks` streams a member (XML parsers feed on it),
:meth:`Archive.read` returns a small member whole, and
:meth:`Archive.verified_bytes` inflates every member once (output
discarded) so that a library that opens the zip itself (python-pptx,
openpyxl) is handed an archive whose declared sizes are now known to be
the true ones: every stream ends exactly at its declared size, so their
reads allocate no more than that.
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

from kgrag.errors import LoaderError
from kgrag.ingest import guard
from kgrag.ingest.options import LoadOptions

_LOCAL_HEADER = b"PK\x03\x04"
_IN_CHUNK = 64 * 1024  # compressed bytes fed per step
_OUT_CHUNK = 1024 * 1024  # most inflated bytes one step may produce


class Archive:
    """A zip-based file read once into memory, its members inflated under the budgets."""

    def __init__(self, source: Path | bytes, options: LoadOptions, kind: str, name: str = ""):
        self.options, self.kind = options, kind
        self.name = name or str(source if isinstance(source, Path) else "<archive>")
        path = Path(self.name)
        self.data = guard.read_bounded(source, options) if isinstance(source, Path) else source
        self.total = 0
        self._seen: dict[str, int] = {}  # bytes of each member counted into total
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(self.data))
            self.infos = {i.filename: i for i in self._zip.infolist()}
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise LoaderError(self.name, f"unreadable or corrupt {kind}: {exc}") from exc
        guard.check_zip_infos(path, list(self.infos.values()), options, kind)

    @classmethod
    def of(cls, source: Archive | Path | bytes, name: str, kind: str) -> Archive:
        """``source`` itself, or an archive of it under the default budgets."""
        return source if isinstance(source, Archive) else cls(source, LoadOptions(), kind, name)

    def has(self, member: str) -> bool:
        return member in self.infos

    def read(self, member: str) -> bytes:
        """A member's bytes (``KeyError`` when absent), inflated under the budgets."""
        return b"".join(self.chunks(member))

    def chunks(self, member: str) -> Iterator[bytes]:
        """A member's inflated bytes, piece by piece, counted as they come."""
        info = self.infos[member]
        size = 0
        crc = 0
        for piece in self._inflate(info):
            size += len(piece)
            self._check(info, size)
            crc = zlib.crc32(piece, crc)
            yield piece
        if size != info.file_size or crc != info.CRC:
            what = "ends early" if size != info.file_size else "fails its CRC-32 check"
            self._refuse(f"unreadable or corrupt {self.kind}: member {member!r} {what}")

    def verified_bytes(self) -> bytes:
        """The file's bytes once every member has inflated within the budgets."""
        for member in self.infos:
            for _ in self.chunks(member):
                pass
        return self.data

    def _check(self, info: zipfile.ZipInfo, size: int) -> None:
        """Refuse at ``size`` bytes inflated of ``info``; each byte counts once in the total."""
        o = self.options
        if size > info.file_size:
            self._refuse(
                f"{self.kind} archive is forged: member {info.filename!r} inflates past "
                f"the {guard.size_text(info.file_size)} its directory declares"
            )
        if size > o.zip_max_member_bytes:
            self._refuse(
                f"{self.kind} archive member {info.filename!r} inflates to more than "
                f"{guard.size_text(o.zip_max_member_bytes)} (zip_max_member_bytes)"
            )
        seen = self._seen.get(info.filename, 0)
        if size > seen:
            self.total += size - seen
            self._seen[info.filename] = size
        if self.total > o.zip_max_total_bytes:
            self._refuse(
                f"{self.kind} archive inflates to more than "
                f"{guard.size_text(o.zip_max_total_bytes)} (zip_max_total_bytes)"
            )

    def _refuse(self, reason: str) -> None:
        raise LoaderError(self.name, reason)

    def _raw(self, info: zipfile.ZipInfo) -> memoryview:
        """The member's compressed bytes, located through its local header."""
        at = info.header_offset
        header = self.data[at : at + 30]
        if len(header) < 30 or header[:4] != _LOCAL_HEADER:
            self._refuse(
                f"unreadable or corrupt {self.kind}: bad local header for {info.filename!r}"
            )
        if info.flag_bits & 1:
            self._refuse(f"{self.kind} member {info.filename!r} is encrypted")
        name_len, extra_len = struct.unpack_from("<HH", header, 26)
        start = at + 30 + name_len + extra_len
        return memoryview(self.data)[start : start + info.compress_size]

    def _inflate(self, info: zipfile.ZipInfo) -> Iterator[bytes]:
        raw = self._raw(info)
        if info.compress_type == zipfile.ZIP_STORED:
            for at in range(0, len(raw), _OUT_CHUNK):
                yield bytes(raw[at : at + _OUT_CHUNK])
            return
        if info.compress_type != zipfile.ZIP_DEFLATED:
            self._refuse(
                f"{self.kind} member {info.filename!r} uses compression method "
                f"{info.compress_type} (only stored and deflated are read)"
            )
        try:
            yield from _deflated(raw)
        except zlib.error as exc:
            self._refuse(f"unreadable or corrupt {self.kind}: {info.filename!r}: {exc}")


def has_mark(archive: Archive, member: str, mark: re.Pattern[bytes]) -> bool:
    """Whether ``mark`` (at most 64 bytes long) occurs in a member, scanned as it inflates."""
    tail = b""
    for piece in archive.chunks(member):
        if mark.search(tail + piece):
            return True
        tail = piece[-64:]
    return False


def _deflated(raw: memoryview) -> Iterator[bytes]:
    """Inflate a raw deflate stream, never more than ``_OUT_CHUNK`` bytes per step."""
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    at = 0
    while not inflater.eof:
        data = inflater.unconsumed_tail
        if not data:
            data = bytes(raw[at : at + _IN_CHUNK])
            at += len(data)
        if not data:
            return  # truncated stream: the size check of Archive.chunks reports it
        out = inflater.decompress(data, _OUT_CHUNK)
        if out:
            yield out
