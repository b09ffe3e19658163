"""A place is not the place that contains it, nor the thing named after it.

*Korçë* is a town, *Korçë County* the county around it; *Chiang Rai
International Airport* is an airport, *University of Georgetown* a
university, *Young, New South Wales* a town in New South Wales. The names
share every word of the shorter one, so name scores (and descriptions,
neighbours and chunks shared by a place and its surroundings) say
"the same"; a reader says "two things". These pairs are hard negatives
whatever the score and whatever types the extractor gave (it types
*Chiang Rai* a person as often as a place).

Form words stay forms, not other things: *Republic of Latvia* is Latvia,
*State of Israel* is Israel, 浙江省 is 浙江 and 北京市 is 北京 (a Chinese
province or city is named by its stem alone).
"""

from __future__ import annotations

from kgrag.curation.resolution.names import Name, parse

# heads after a name that make it another, larger or smaller thing (Korçë County, Chiang Rai
# International Airport): never a person's surname
SUFFIXES = frozenset(
    {"county", "province", "prefecture", "district", "municipality", "township", "borough"}
    | {"airport", "airfield", "university", "station", "state", "city", "region", "parish"}
)
# heads that are also surnames (Veronica Lake, Damon Hill): other things unless both are people
SURNAME_LIKE = frozenset({"river", "lake", "mountain", "mount", "port", "hill", "island", "bay"})
# heads before a name: City of London, University of Georgetown, Lake Geneva, Port Moresby
PREFIXES = frozenset({"city", "university", "county", "port", "lake", "mount", "province"})
ZH_SUFFIXES = ("国际机场", "机场", "大学", "县", "区", "站")


def contains(na: Name, nb: Name, people: bool) -> str | None:
    """Why ``na`` and ``nb`` are a place and another place of the same stem, if they are."""
    for short, long in ((na, nb), (nb, na)):
        if not people and _located(short, long):
            return "a place and a place inside it (X, Y)"
        if _headed(short, long, people):
            return "a place and another place or body of the same name stem"
    return None


def _located(short: Name, long: Name) -> bool:
    """``long`` is "X, Y" and ``short`` is Y: Young, New South Wales against New South Wales."""
    head, comma, tail = long.raw.partition(",")
    return bool(comma and head.strip() and tail.strip()) and parse(tail).key == short.key


def _headed(short: Name, long: Name, people: bool) -> bool:
    if not short.key or short.key == long.key or short.cjk != long.cjk:
        return False
    if short.cjk:
        rest = long.key[len(short.key) :] if long.key.startswith(short.key) else ""
        return rest in ZH_SUFFIXES
    heads = SUFFIXES if people else SUFFIXES | SURNAME_LIKE
    s, lt, n = short.tokens, long.tokens, len(short.tokens)
    if lt[:n] == s and len(lt) > n and lt[-1] in heads:
        return True
    before = [t for t in lt[: len(lt) - n] if t != "of"]
    return lt[len(lt) - n :] == s and len(before) == 1 and before[0] in PREFIXES and not people
