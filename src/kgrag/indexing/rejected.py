"""The inputs an index refused to load, with their reasons (``rejected_inputs``, for status).

A later successful load of a file clears its entry, and a file that no
longer exists is no news: its entry goes too. A path that is not valid
text (a file name that is not UTF-8) is kept escaped
(:func:`kgrag.ingest.names.display_name`), so it is stored and shown, and
forgotten by the next load (which refuses it again if it is still there).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kgrag.ingest.names import display_name

if TYPE_CHECKING:
    from kgrag.ingest.loaders import LoadReport
    from kgrag.storage.base import Storage

KEY = "rejected_inputs"


async def note_rejected(storage: Storage, loaded: LoadReport) -> None:
    """Remember the files ``loaded`` refused and forget those it loaded (written on change only)."""
    before = await storage.get_meta(KEY) or {}
    stored = rejections(before, loaded)
    if stored != before:
        await storage.set_meta(KEY, dict(sorted(stored.items())))


def rejections(before: dict[str, str], loaded: LoadReport) -> dict[str, str]:
    """The refused inputs after a load: gone files dropped, loaded ones cleared, new ones added."""
    stored = {p: r for p, r in before.items() if os.path.exists(p)}  # gone files are no news
    for doc in loaded.documents:
        stored.pop(doc.source or doc.file_path, None)
    for error in loaded.errors:
        path = os.path.abspath(getattr(error, "path", str(error)))
        stored[display_name(path)] = display_name(getattr(error, "reason", str(error)))
    return stored
