"""The knobs the loaders obey, in one small object.

Loaders are plain functions; rather than long argument lists they take a
:class:`LoadOptions`, built from :class:`~kgrag.config.settings.Settings` by
:meth:`LoadOptions.from_settings` (``KGRag.index_paths`` does it) or
directly by callers of :func:`~kgrag.ingest.loaders.load_paths`. The
defaults are the loading section's (:mod:`kgrag.config.loading`).
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kgrag.config.loading import (
    DEFAULT_MAX_DOCUMENT_CHARS,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_ZIP_MAX_ENTRIES,
    DEFAULT_ZIP_MAX_MEMBER_BYTES,
    DEFAULT_ZIP_MAX_RATIO,
    DEFAULT_ZIP_MAX_TOTAL_BYTES,
)
from kgrag.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from kgrag.config.settings import Settings


@dataclass(frozen=True, slots=True)
class LoadOptions:
    """Limits and choices for loading files.

    ``encoding``: read every text / HTML file with this codec (a byte order
    mark still wins); ``None`` detects it. The ``zip_*`` budgets apply to
    every zip-based format (.docx, .pptx, .xlsx, .epub, .odt): checked
    against the central directory before anything is inflated, then
    against what really inflates (:mod:`kgrag.ingest.archive`).
    """

    encoding: str | None = None
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_document_chars: int = DEFAULT_MAX_DOCUMENT_CHARS
    zip_max_total_bytes: int = DEFAULT_ZIP_MAX_TOTAL_BYTES
    zip_max_member_bytes: int = DEFAULT_ZIP_MAX_MEMBER_BYTES
    zip_max_ratio: float = DEFAULT_ZIP_MAX_RATIO
    zip_max_entries: int = DEFAULT_ZIP_MAX_ENTRIES
    follow_symlinks: bool = False

    def __post_init__(self) -> None:
        if self.encoding is not None:
            object.__setattr__(self, "encoding", codec_name(self.encoding))
        for name in (
            "max_file_bytes",
            "max_document_chars",
            "zip_max_total_bytes",
            "zip_max_member_bytes",
            "zip_max_entries",
            "zip_max_ratio",
        ):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)!r}")

    @classmethod
    def from_settings(cls, settings: Settings) -> LoadOptions:
        """The options a :class:`~kgrag.config.settings.Settings` object asks for (its loading section)."""
        return cls(**settings.loading.model_dump())


def codec_name(name: str) -> str:
    """Python's canonical name of codec ``name``; an unknown one is a ConfigError."""
    try:
        info = codecs.lookup(name.strip())
    except LookupError as exc:
        raise ConfigError(
            f"unknown encoding {name!r} (input_encoding / --encoding); "
            f"use a Python codec name such as utf-8, gb18030, cp1252"
        ) from exc
    if not _is_text_codec(info):
        raise ConfigError(f"{name!r} is not a text encoding")
    return info.name


def _is_text_codec(info: codecs.CodecInfo) -> bool:
    """False for bytes-to-bytes codecs (base64, zlib, ...) that lookup also finds."""
    return getattr(info, "_is_text_encoding", True)
