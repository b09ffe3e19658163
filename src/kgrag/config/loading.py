"""The loading section: limits and choices for reading files (docs/ingestion.md).

The loaders take these values as a :class:`~kgrag.ingest.options.LoadOptions`
(``LoadOptions.from_settings``); the defaults live here so that config
imports nothing above it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

MiB = 1024 * 1024

DEFAULT_MAX_FILE_BYTES = 100 * MiB
DEFAULT_MAX_DOCUMENT_CHARS = 50_000_000
DEFAULT_ZIP_MAX_TOTAL_BYTES = 256 * MiB
DEFAULT_ZIP_MAX_MEMBER_BYTES = 256 * MiB
DEFAULT_ZIP_MAX_RATIO = 100.0
DEFAULT_ZIP_MAX_ENTRIES = 10_000


class LoadingSettings(BaseModel):
    """Reading files: encodings, size limits, zip-bomb budgets, symbolic links."""

    encoding: str | None = Field(
        None,
        description=(
            "Read every text and HTML file with this codec (a byte order mark still wins); unset: "
            "BOM, declared charset (HTML), strict UTF-8, then charset-normalizer detection."
        ),
    )
    max_file_bytes: int = Field(
        DEFAULT_MAX_FILE_BYTES,
        ge=1,
        description=(
            "Files bigger than this many bytes are refused (checked with stat before reading)."
        ),
    )
    max_document_chars: int = Field(
        DEFAULT_MAX_DOCUMENT_CHARS,
        ge=1,
        description="A document whose extracted text is longer is refused, not truncated.",
    )
    zip_max_total_bytes: int = Field(
        DEFAULT_ZIP_MAX_TOTAL_BYTES,
        ge=1,
        description=(
            "Zip-based files (.docx, ...) that would inflate to more bytes are refused: from the"
            " declared sizes first, then counted as members inflate."
        ),
    )
    zip_max_member_bytes: int = Field(
        DEFAULT_ZIP_MAX_MEMBER_BYTES,
        ge=1,
        description=(
            "One member of a zip-based file may inflate to at most this many bytes (counted as it"
            " inflates, whatever the archive declares)."
        ),
    )
    zip_max_ratio: float = Field(
        DEFAULT_ZIP_MAX_RATIO,
        gt=0,
        description=(
            "Zip-based files compressed more than this ratio (whole archive or an entry over 1 MiB)"
            " are refused as zip bombs."
        ),
    )
    zip_max_entries: int = Field(
        DEFAULT_ZIP_MAX_ENTRIES,
        ge=1,
        description="Zip-based files with more entries are refused.",
    )
    follow_symlinks: bool = Field(
        False,
        description=(
            "Follow symbolic links that leave the folder being indexed (loops are never followed "
            "twice); off: they are skipped with a reason."
        ),
    )
