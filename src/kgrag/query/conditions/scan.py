"""Every qualifier mentioned in a text, overlaps resolved.

Finders run in priority order (dates, protocols, versions, quantities,
models, years, places); a mention overlapping one already taken is
dropped, so ``TLS 1.3`` is one protocol, not a protocol and a version,
and ``2021年3月`` one date, not a date and a year.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from kgrag.query.conditions.constraint import Mention
from kgrag.query.conditions.scan_code import models, protocols, versions
from kgrag.query.conditions.scan_misc import places, quantities
from kgrag.query.conditions.scan_time import dates, years

FINDERS: tuple[Callable[[str], list[Mention]], ...] = (
    dates,
    protocols,
    versions,
    quantities,
    models,
    years,
)


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in taken)


def _resolve(found: list[Mention]) -> list[Mention]:
    taken: list[tuple[int, int]] = []
    out = []
    for mention in found:
        if not _overlaps(mention.span, taken):
            taken.append(mention.span)
            out.append(mention)
    return sorted(out, key=lambda m: m.span)


@lru_cache(maxsize=4096)
def _scan(text: str, with_places: bool) -> tuple[Mention, ...]:
    found = [m for finder in FINDERS for m in finder(text)]
    if with_places:
        found += places(text)
    return tuple(_resolve(found))


def scan(text: str, with_places: bool = False) -> list[Mention]:
    """The qualifiers in ``text``, in text order (places only when asked: the question's)."""
    return list(_scan(text, with_places))
