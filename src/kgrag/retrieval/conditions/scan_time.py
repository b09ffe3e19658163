"""Finders for dates and years, English and Chinese.

Dates normalise to ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``, so a year
asked for agrees with any date inside it (see
:func:`kgrag.retrieval.conditions.constraint.compatible`). A bare four-digit
number is a year only where the text reads it as one ("in 2021",
"(2021)", "2021, ...", "2021年"): "2000 connections" is no year.
"""

from __future__ import annotations

import re

from kgrag.retrieval.conditions.constraint import Mention

_MONTHS = {
    m: i
    for i, m in enumerate(
        "january february march april may june july august september october november december".split(),
        1,
    )
}
_MONTHS |= {m[:3]: i for m, i in list(_MONTHS.items())} | {"sept": 9}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?P<year>1[5-9]\d\d|2[01]\d\d)"
_DATES = [
    re.compile(rf"(?<!\d){_YEAR}-(?P<m>\d{{1,2}})(?:-(?P<d>\d{{1,2}}))?(?!\d)"),
    re.compile(
        rf"(?<!\d){_YEAR}\s*年(?:\s*(?P<m>\d{{1,2}})\s*月(?:\s*(?P<d>\d{{1,2}})\s*[日号])?)?"
    ),
    re.compile(
        rf"(?<![A-Za-z]){_MONTH}\s+(?:(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+)?{_YEAR}(?!\d)", re.I
    ),
    re.compile(rf"(?<!\d)(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH}\s+{_YEAR}(?!\d)", re.I),
]
# A four-digit number read as a year: after these words, or before punctuation or the end.
_YEAR_BEFORE = re.compile(
    r"(?:\b(?:in|since|from|until|till|to|by|of|year|during|before|after|around|circa|"
    r"early|late|mid|between|and|or|a|an|the|c\.)|[(\[–-])\s*$",
    re.I,
)
_BARE_YEAR = re.compile(rf"(?<![\w.-]){_YEAR}(?![\w-]|\.\d|\s*%)")
_YEAR_AFTER = re.compile(r"\s*(?:[,.;:!?)\]–-]|$|\s+(?:and|or|to|when|was|were|is)\b)")


def _norm(year: str, month: str | None, day: str | None) -> str | None:
    if month is None:
        return year
    m = _MONTHS.get(month.lower().rstrip(".")) if not month.isdigit() else int(month)
    if not m or not 1 <= m <= 12:
        return None
    if day is None:
        return f"{year}-{m:02d}"
    d = int(day)
    return f"{year}-{m:02d}-{d:02d}" if 1 <= d <= 31 else None


_ANY_YEAR = re.compile(rf"(?<!\d){_YEAR}(?!\d)")


def _windows(text: str) -> list[tuple[int, str]]:
    """(offset, text) around each four-digit year: dates are looked for there only."""
    return [
        (max(0, m.start() - 24), text[max(0, m.start() - 24) : m.end() + 12])
        for m in _ANY_YEAR.finditer(text)
    ]


def dates(text: str) -> list[Mention]:
    """Dates with a month (``2021-03-05``, ``March 2021``, ``2021年3月``) and years of ``2021年``."""
    found: dict[tuple[int, int], Mention] = {}
    for offset, window in _windows(text):
        for pattern in _DATES:
            for m in pattern.finditer(window):
                g = m.groupdict()
                norm = _norm(g["year"], g.get("m") or g.get("month"), g.get("d"))
                if norm:
                    kind = "date" if "-" in norm else "year"
                    span = (m.start() + offset, m.end() + offset)
                    found[span] = Mention(kind, norm, "time", span, m.group(0))
    # longest first: "5 March 2021" before "March 2021"
    return sorted(found.values(), key=lambda m: m.span[0] - m.span[1])


def years(text: str) -> list[Mention]:
    """Four-digit years where the text reads them as years."""
    out: list[Mention] = []
    if not _ANY_YEAR.search(text):
        return out
    for m in _BARE_YEAR.finditer(text):
        before, after = text[max(0, m.start() - 16) : m.start()], text[m.end() : m.end() + 8]
        if _YEAR_BEFORE.search(before) or _YEAR_AFTER.match(after):
            out.append(Mention("year", m.group("year"), "time", m.span(), m.group(0)))
    return out
