"""Zip archives whose directory lies about a member's size, and large legal .docx files.

:func:`forge` copies a real archive (a .docx, .odt, ... built by the
format tests) and gives one member a deflate stream that inflates to the
member's real XML followed by ``inflated`` bytes of blanks (legal after
the root element), while the local header and the central directory
declare the original size and CRC-32. A reader that trusts the declared
size gets the original, valid XML back, after inflating everything.

The stream is built without compressing gigabytes: after a full flush
the compressor starts afresh, so one compressed MiB of blanks is the
same bytes every time and is simply written ``inflated / MiB`` times.
"""

from __future__ import annotations

import random
import struct
import zipfile
import zlib
from pathlib import Path

MiB = 1024 * 1024
_BLANKS = b" " * MiB


def _deflate_padded(head: bytes, inflated: int) -> bytes:
    """A raw deflate stream of ``head`` then ``inflated`` (a multiple of 1 MiB) blanks."""
    c = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    first = c.compress(head) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(_BLANKS) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(_BLANKS) + c.flush(zlib.Z_FULL_FLUSH)
    assert block == again, "zlib did not restart after a full flush"
    return first + block * (inflated // MiB) + c.flush()


def _deflate(data: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


def write_zip(path: Path, members: list[tuple[str, bytes, int, int]]) -> None:
    """Members as (name, raw deflate stream, declared size, declared CRC-32)."""
    out, directory = bytearray(), bytearray()
    for name, stream, size, crc in members:
        encoded = name.encode()
        fields = (20, 0, 8, 0, 0x21, crc, len(stream), size, len(encoded))
        directory += struct.pack("<4s2H", b"PK\x01\x02", 20, 20)
        directory += struct.pack("<4H3L2H", *fields[1:], 0)
        directory += struct.pack("<3H2L", 0, 0, 0, 0, len(out)) + encoded
        out += struct.pack("<4sH", b"PK\x03\x04", 20)
        out += struct.pack("<4H3L2H", *fields[1:], 0) + encoded + stream
    end = struct.pack(
        "<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(directory), len(out), 0
    )
    path.write_bytes(bytes(out + directory + end))


def forge(real: Path, path: Path, member: str, inflated: int) -> None:
    """``real`` copied to ``path`` with ``member`` inflating ``inflated`` bytes past its claim."""
    members = []
    with zipfile.ZipFile(real) as archive:
        for info in archive.infolist():
            data = archive.read(info)
            stream = _deflate_padded(data, inflated) if info.filename == member else _deflate(data)
            members.append((info.filename, stream, len(data), zlib.crc32(data)))
    write_zip(path, members)


_WORDS = [f"w{n:x}" for n in range(256)]


def large_docx(path: Path, xml_bytes: int, seed: int = 7) -> None:
    """A legal .docx whose ``document.xml`` is about ``xml_bytes`` of varied paragraphs."""
    rng = random.Random(seed)
    head = (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        b"<w:body>"
    )
    pieces, size = [head], len(head)
    while size < xml_bytes:
        text = " ".join(rng.choices(_WORDS, k=60))
        para = f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>".encode()
        pieces.append(para)
        size += len(para)
    pieces.append(b"</w:body></w:document>")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        archive.writestr("word/document.xml", b"".join(pieces))


_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" ContentType="application/'
    'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/officeDocument" Target="word/document.xml"/></Relationships>'
)
