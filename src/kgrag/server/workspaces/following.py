"""Whether an open index instance still matches what the index records about itself.

The first indexing run into a workspace settles its language and records
its settings (:mod:`kgrag.indexing.manifest`); an instance opened before that, in
this process or in any other one, still has the settings it opened with.
:func:`behind` asks the store, never this process's memory, so a server
follows a run that another process (or ``kgrag index``) committed.
"""

from __future__ import annotations

import json
import weakref
from typing import TYPE_CHECKING, Any

from kgrag.errors import ConfigError
from kgrag.indexing import manifest

if TYPE_CHECKING:
    from kgrag.api.facade import KGRag
    from kgrag.config.settings import Settings


# The last verdict per instance: (record, its settings, base, behind?); settling settings
# is a millisecond, reading the record a tenth of that.
_LAST: weakref.WeakKeyDictionary[Any, tuple[str, Settings, Settings, bool]] = (
    weakref.WeakKeyDictionary()
)


async def behind(rag: KGRag, base: Settings) -> bool:
    """Whether opening ``base`` now would give other remembered settings than ``rag`` has.

    One meta read. An index that records nothing yet is never behind; a
    record contradicting ``base`` raises the :class:`~kgrag.errors.ConfigError`
    that opening it would.
    """
    stored = await rag.storage.get_meta(manifest.META_KEY)
    if not isinstance(stored, dict):
        return False
    text = json.dumps(stored, sort_keys=True, default=str)
    last = _LAST.get(rag)
    if last is not None and last[0] == text and last[1] is rag.settings and last[2] is base:
        return last[3]
    try:
        wanted = manifest.apply(base, stored).settings
    except ConfigError:
        if await manifest.bound(rag.storage):
            raise
        wanted = manifest.apply(base, stored, provisional=True).settings  # nothing binds it yet
    verdict = any(wanted.value(f) != rag.settings.value(f) for f in manifest.REMEMBERED)
    _LAST[rag] = (text, rag.settings, base, verdict)
    return verdict
