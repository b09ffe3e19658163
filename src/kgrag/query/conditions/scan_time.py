"""Finders for dates and years, English and Chinese.

Dates normalise to ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``, so a year
asked for agrees with any date inside it (see
:func:`kgrag.query.conditions.constraint.compatible`). A bare four-digit
number is a year only where the text reads it as one ("in 2021",
"(2021)", "2021, ...", "2021年"): "2000 connections" is no year.
"""

from __future__ import annotations

import re

from kgrag.query.conditions.constraint import Mention

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
    r"early|late|mid|between|and|or|c\.)|[(\[–-])\s*$",
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


def dates(text: str) -> list[Mention]:
    """Dates with a month (``2021-03-05``, ``March 2021``, ``2021年3月``) and years of ``2021年``."""
    out = []
    for pattern in _DATES:
        for m in pattern.finditer(text):
            g = m.groupdict()
            norm = _norm(g["year"], g.get("m") or g.get("month"), g.get("d"))
            if norm:
                kind = "date" if "-" in norm else "year"
                out.append(Mention(kind, norm, "time", m.span(), m.group(0)))
    return sorted(out, key=lambda m: m.span[0] - m.span[1])  # longest first: "5 March 2021"


def years(text: str) -> list[Mention]:
    """Four-digit years where the text reads them as years."""
    out = []
    for m in _BARE_YEAR.finditer(text):
        before, after = text[: m.start()], text[m.end() :]
        if _YEAR_BEFORE.search(before) or _YEAR_AFTER.match(after):
            out.append(Mention("year", m.group("year"), "time", m.span(), m.group(0)))
    return out
