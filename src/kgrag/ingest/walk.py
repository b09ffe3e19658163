"""Which files a path names: the file itself, or a folder walked safely.

Folders are walked depth first in sorted order (a folder's files, then its
sub-folders); names starting with ``.`` are skipped. Symbolic links:

* a path given by the caller is always followed (it was asked for);
* inside a folder, a link whose target stays inside the folder being
  indexed is a file like any other (a linked folder is skipped quietly:
  the walk reaches its target anyway); a link leaving the folder is
  skipped with a reason unless ``follow_symlinks`` is set;
* broken links and link loops are skipped with a reason; with
  ``follow_symlinks`` every folder is entered at most once (by device and
  inode), so loops cannot make the walk endless.

A name that is not valid UTF-8 (bytes in another encoding) cannot be
stored as a document's source, so such a file, or a folder with
everything in it, is skipped with one reason naming it escaped
(:func:`kgrag.ingest.names.display_name`); the rest of the folder goes on.
Other odd names (newlines, control characters) are indexed as they are.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field

from kgrag.errors import LoaderError
from kgrag.ingest.names import display_name, is_text
from kgrag.ingest.options import LoadOptions

Entry = str | LoaderError  # a file to load, or a reason it was skipped


@dataclass(slots=True)
class _Walk:
    root: str  # real path of the folder being indexed
    options: LoadOptions
    seen_dirs: set[tuple[int, int]] = field(default_factory=set)


def iter_entries(given: str, options: LoadOptions) -> Iterator[Entry]:
    """Files under ``given`` (or ``given`` itself), and the links skipped on the way."""
    if not os.path.isdir(given):
        yield given if is_text(os.path.realpath(given)) else not_text(given, "file")
        return
    walk = _Walk(os.path.realpath(given), options)
    if not is_text(walk.root):
        yield not_text(given, "folder")
        return
    stack = [given]
    while stack:
        folder = stack.pop()
        if not _first_visit(walk, folder):
            continue
        files, dirs = yield from _scan(walk, folder)
        yield from files
        stack.extend(reversed(dirs))


def _first_visit(walk: _Walk, folder: str) -> bool:
    try:
        info = os.stat(folder)
    except OSError:
        return False
    key = (info.st_dev, info.st_ino)
    if key in walk.seen_dirs:
        return False
    walk.seen_dirs.add(key)
    return True


def _scan(walk: _Walk, folder: str) -> Generator[LoaderError, None, tuple[list[str], list[str]]]:
    """Yield skipped links and names; return (files, sub-folders) of ``folder``, sorted."""
    files: list[str] = []
    dirs: list[str] = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        yield LoaderError(folder, f"cannot list folder: {exc.strerror or exc}")
        return files, dirs
    for entry in entries:
        if entry.name.startswith("."):
            continue
        link = entry.is_symlink()
        if link:
            kind = yield from _judge_link(walk, entry.path)
        else:
            kind = "dir" if entry.is_dir(follow_symlinks=False) else "file"
        if kind is not None and not is_text(os.path.realpath(entry.path) if link else entry.name):
            yield not_text(entry.path, "folder" if kind == "dir" else "file")
            continue
        if kind == "file":
            files.append(entry.path)
        elif kind == "dir":
            dirs.append(entry.path)
    return files, dirs


def _judge_link(walk: _Walk, path: str) -> Generator[LoaderError, None, str | None]:
    """Return "file", "dir" or None (skipped, maybe with a yielded reason) for a link."""
    target = os.path.realpath(path)
    if not os.path.exists(path):
        target = display_name(os.readlink(path))
        yield LoaderError(path, f"broken symlink or symlink loop (-> {target})")
        return None
    inside = _inside(target, walk.root)
    is_dir = os.path.isdir(path)
    if inside:
        return None if is_dir else "file"  # a linked folder inside is walked anyway
    if not walk.options.follow_symlinks:
        yield LoaderError(
            path,
            f"symlink to {display_name(target)}, outside the folder being indexed; "
            "skipped (use --follow-symlinks / follow_symlinks)",
        )
        return None
    return "dir" if is_dir else "file"


def _inside(target: str, root: str) -> bool:
    try:
        return os.path.commonpath([target, root]) == root
    except ValueError:  # different drives
        return False


def not_text(path: str, kind: str = "file") -> LoaderError:
    """The reason a file or folder whose name is not UTF-8 is skipped."""
    outcome = "nothing in it is indexed" if kind == "folder" else "it is not indexed"
    return LoaderError(
        path,
        f"the {kind} name is not valid UTF-8, which a document's source must be; "
        f"{outcome} (rename it to index it)",
    )
