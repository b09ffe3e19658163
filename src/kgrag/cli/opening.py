"""Opening the index a command works on, and the exit statuses every command shares."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from kgrag.api.facade import KGRag
from kgrag.config.settings import Settings
from kgrag.errors import ConfigError, DocumentNotFoundError, KGRagError

OK, FAILED, USAGE, INTERRUPTED = 0, 1, 2, 130

EXIT_CODES = """\
exit status:
  0    success
  1    a handled failure: some documents failed, check found problems, a model,
       the store or a busy workdir (--no-wait) stopped the command
  2    usage or configuration error: bad arguments, invalid settings, no index
       at the workdir (only 'kgrag index' creates one), settings that
       contradict the index's, a document id that names nothing
  130  interrupted (Ctrl-C); run the same command again to resume
"""


def exit_status(exc: KGRagError) -> int:
    """2 for what the user can fix in the command or settings, else 1."""
    return USAGE if isinstance(exc, ConfigError | DocumentNotFoundError) else FAILED


@asynccontextmanager
async def opened(settings: Settings, *, create: bool = False) -> AsyncIterator[KGRag]:
    """The workdir's index, open; ``create``: make one when the workdir holds none.

    Only ``kgrag index`` creates: every other command refuses a workdir
    without an index (a typo in ``--workdir`` must not succeed).
    """
    rag = KGRag(settings)
    await rag.open(create=create)
    try:
        yield rag
    finally:
        await rag.close()
