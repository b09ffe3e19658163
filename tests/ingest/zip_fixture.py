"""Zip archives for the decompression-budget tests: big when inflated, small on disk."""

from __future__ import annotations

import zipfile

GiB = 1024**3
MiB = 1024**2


def zeros_entry(path, name: str, size: int, mode: str = "w") -> None:
    """Add ``size`` zero bytes as one deflated entry, streamed in 1 MiB chunks."""
    chunk = bytes(MiB)
    with (
        zipfile.ZipFile(path, mode, zipfile.ZIP_DEFLATED, compresslevel=1) as archive,
        archive.open(name, "w", force_zip64=True) as f,
    ):
        for _ in range(size // MiB):
            f.write(chunk)
