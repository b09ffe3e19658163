"""Every qualifier mentioned in a text, overlaps resolved.

Finders run in priority order (dates, protocols, versions, quantities,
models, years, places); a mention overlapping one already taken is
dropped, so ``TLS 1.3`` is one protocol, not a protocol and a version,
and ``2021年3月`` one date, not a date and a year.

The question is scanned for everything; an item only for the kinds the
question asks about (``kinds``), since other mentions cannot match or
conflict: an ordinary question with no qualifiers costs no scan at all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache

from kgrag.retrieval.conditions.constraint import Mention
from kgrag.retrieval.conditions.scan_code import models, protocols, versions
from kgrag.retrieval.conditions.scan_quantity_place import places, quantities
from kgrag.retrieval.conditions.scan_time import dates, years

Finder = Callable[[str], list[Mention]]
# (finder, the kinds it finds), in priority order.
FINDERS: tuple[tuple[Finder, frozenset[str]], ...] = (
    (dates, frozenset({"date", "year"})),
    (protocols, frozenset({"protocol"})),
    (versions, frozenset({"version"})),
    (quantities, frozenset({"quantity"})),
    (models, frozenset({"model"})),
    (years, frozenset({"date", "year"})),
)
ALL_KINDS = frozenset({"date", "year", "protocol", "version", "quantity", "model"})


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in taken)


def _without_overlaps(found: list[Mention]) -> list[Mention]:
    """The mentions that overlap none kept before them (finders come in priority order), by position."""
    taken: list[tuple[int, int]] = []
    out = []
    for mention in found:
        if not _overlaps(mention.span, taken):
            taken.append(mention.span)
            out.append(mention)
    return sorted(out, key=lambda m: m.span)


@lru_cache(maxsize=4096)
def _scan(text: str, with_places: bool, kinds: frozenset[str]) -> tuple[Mention, ...]:
    found = [m for finder, finds in FINDERS if finds & kinds for m in finder(text)]
    if with_places:
        found += places(text)
    return tuple(_without_overlaps(found))


def scan(text: str, with_places: bool = False, kinds: Iterable[str] | None = None) -> list[Mention]:
    """The qualifiers in ``text``, in text order (``kinds``: only these; places when asked)."""
    wanted = ALL_KINDS if kinds is None else frozenset(kinds) & ALL_KINDS
    if not wanted and not with_places:
        return []
    return list(_scan(text, with_places, wanted))
