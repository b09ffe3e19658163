"""Storing uploaded files safely in a workspace's input folder.

The client's file name is never used as a path: a file is stored as
``<12 hex digits>-<slug><suffix>`` in ``<workspace>/inputs`` (the slug
keeps ASCII letters, digits, ``.``, ``-`` and ``_`` of the original name,
so references stay readable), and the original name, cleaned of control
characters, goes into the document's metadata (``original_name``) only.

Refused with a 4xx and a short reason, before anything is indexed: a
suffix no loader reads (415), an empty file (400), a file over the limit (413: the smaller of
``max_file_bytes`` and ``max_upload_mb``; the body is read in pieces and
never kept whole in memory), and a zip-based file (.docx) over the
decompression budgets of :func:`kgrag.ingest.guard.check_zip` (422). A
file is written under a hidden temporary name and renamed into place only
once it passed, so a refused or half-received upload leaves nothing.
Problems only the loader can see (a corrupt PDF, no text) are accepted
here and fail the document later: its track says why. Each file of a
request is judged alone (:func:`judge_uploads`): the accepted ones are
kept, the refused ones come back with their status and reason.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from fastapi import HTTPException
from starlette.datastructures import UploadFile

from kgrag.errors import LoaderError
from kgrag.ingest import guard
from kgrag.ingest.loaders import FORMATS
from kgrag.ingest.options import LoadOptions

if TYPE_CHECKING:
    from kgrag.config.settings import Settings
    from kgrag.server.deps import Workspace

INPUTS = "inputs"
PIECE = 1024 * 1024
MAX_NAME = 255
MAX_FILES = 100  # files in one upload request
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class UploadLimits:
    """The largest file accepted and the load options the guard checks against."""

    max_bytes: int
    options: LoadOptions

    @classmethod
    def from_settings(cls, settings: Settings) -> UploadLimits:
        options = LoadOptions.from_settings(settings)
        upload = int(float(settings.server.max_upload_mb) * 1024 * 1024)
        return cls(min(options.max_file_bytes, upload), options)


@dataclass(frozen=True, slots=True)
class Saved:
    """An upload in place: where it is and what the client called it."""

    path: Path
    original_name: str


def input_folder(workspace_folder: Path) -> Path:
    """``<workspace>/inputs``, created if missing."""
    folder = Path(workspace_folder) / INPUTS
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def inputs_of(ws: Workspace) -> Path:
    """The input folder of the request's workspace."""
    return input_folder(Path(ws.rag.settings.store.workdir))


def clean_name(name: str | None) -> str:
    """The client's name without control characters, at most 255 characters (suffix kept)."""
    text = "".join(c for c in (name or "") if unicodedata.category(c)[0] != "C").strip()
    if len(text) <= MAX_NAME:
        return text
    stem, suffix = os.path.splitext(text)
    suffix = suffix if len(suffix) <= 16 else ""
    return stem[: MAX_NAME - len(suffix)] + suffix  # the type survives the cut


def suffix_of(name: str) -> str:
    """The file's type by its name; 415 for a type no loader reads."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    suffix = os.path.splitext(base)[1].lower()
    if suffix not in FORMATS:
        raise HTTPException(415, f"unsupported file type {suffix or '(none)'!r}")
    return suffix


def stored_name(original: str, suffix: str) -> str:
    """A fresh server-chosen name: random prefix, readable ASCII slug, the suffix."""
    stem = os.path.splitext(original.replace("\\", "/").rsplit("/", 1)[-1])[0]
    slug = _SLUG.sub("_", unicodedata.normalize("NFKD", stem)).strip("._-")[:60] or "upload"
    return f"{secrets.token_hex(6)}-{slug}{suffix}"


async def save_upload(upload: UploadFile, inputs: Path, limits: UploadLimits) -> Saved:
    """Check and store one uploaded file; see the module docstring for what is refused."""
    original = clean_name(upload.filename)
    if not original:
        raise HTTPException(400, "the uploaded file has no name")
    suffix = suffix_of(original)
    final = inputs / stored_name(original, suffix)
    partial = inputs / f".partial-{secrets.token_hex(8)}"
    try:
        size = await _copy(upload, partial, limits.max_bytes)
        if size == 0:
            raise HTTPException(400, f"{original!r} is empty")
        # inflating an archive's members is CPU-bound: never on the event loop
        await asyncio.to_thread(_check_content, partial, suffix, original, limits)
        os.replace(partial, final)
    finally:
        partial.unlink(missing_ok=True)
    return Saved(final, original)


class RefusedView(TypedDict):
    """A refused file as the upload's answer lists it."""

    name: str
    status: int
    reason: str


@dataclass(frozen=True, slots=True)
class Refused:
    """An uploaded file that was not kept: its name, the status and the short reason."""

    original_name: str
    status: int
    reason: str

    def to_dict(self) -> RefusedView:
        return {"name": self.original_name, "status": self.status, "reason": self.reason}


async def judge_uploads(
    given: list[UploadFile], inputs: Path, limits: UploadLimits
) -> tuple[list[Saved], list[Refused]]:
    """Store each acceptable file; the others are refused one by one, never the whole request."""
    saved: list[Saved] = []
    refused: list[Refused] = []
    try:
        for upload in given:
            try:
                saved.append(await save_upload(upload, inputs, limits))
            except HTTPException as exc:
                name = clean_name(upload.filename) or "(no name)"
                refused.append(Refused(name, exc.status_code, str(exc.detail)))
    except BaseException:  # cancelled, or the disk failed: keep nothing of the request
        for s in saved:
            s.path.unlink(missing_ok=True)
        raise
    return saved, refused


async def _copy(upload: UploadFile, target: Path, limit: int) -> int:
    """Write the upload to ``target`` in pieces; 413 past ``limit`` bytes."""
    size = 0
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        while piece := await upload.read(PIECE):
            size += len(piece)
            if size > limit:
                raise HTTPException(413, f"file is over the {guard.size_text(limit)} upload limit")
            out.write(piece)
    return size


def _check_content(path: Path, suffix: str, original: str, limits: UploadLimits) -> None:
    """The zip budgets of zip-based formats (422), checked before the file is kept."""
    if not FORMATS[suffix].zip_based:
        return
    try:
        guard.check_zip(path, limits.options, suffix)
    except LoaderError as exc:
        raise HTTPException(422, f"{original!r}: {exc.reason}") from exc


def inside(folder: Path, path: str | Path) -> Path | None:
    """``path`` resolved, if it lies inside ``folder``; else None."""
    try:
        resolved = Path(path).resolve()
        return resolved if resolved.is_relative_to(Path(folder).resolve()) else None
    except (OSError, ValueError):
        return None
