"""A small generated corpus whose documents share paragraphs (chunks) and names.

Every paragraph is one chunk (the settings split on blank lines only), so
documents built from overlapping paragraph lists share chunks, and
paragraphs that name the same people share entities.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from tests.support.settings import PARAGRAPHS, fake_settings

PEOPLE = [
    "Alice Moreau",
    "Bruno Keller",
    "Chiara Rossi",
    "Dmitri Volkov",
    "Elena Sato",
    "Farid Haddad",
    "Greta Lind",
    "Hugo Laine",
]
PLACES = ["Lyon", "Zurich", "Turin", "Riga", "Osaka", "Tunis", "Bergen", "Porto"]
ORGS = ["Zephyr Robotics", "Northwind Labs", "Quartz Systems", "Helios Foundry"]


def paragraph(i: int, version: int = 0) -> str:
    """Paragraph ``i``; another ``version`` states a different fact about the same people."""
    a, b = PEOPLE[i % len(PEOPLE)], PEOPLE[(i * 3 + 1) % len(PEOPLE)]
    place, org = PLACES[(i + version) % len(PLACES)], ORGS[(i + 2 * version) % len(ORGS)]
    year = 2000 + (i * 7 + version * 3) % 24
    return (
        f"{a} met {b} in {place} in {year}. Together they worked for {org}. "
        f"{a} later wrote a report about {org} and {place}."
    )


def document(paragraphs: list[int], version: int = 0, edited: set[int] | None = None) -> str:
    """The paragraphs joined by blank lines; ``edited`` ones in ``version``."""
    edited = edited or set()
    return "\n\n".join(paragraph(p, version if p in edited else 0) for p in paragraphs)


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


lifecycle_settings = partial(
    fake_settings, **PARAGRAPHS, force_llm_summary_on_merge=3, max_gleaning=0
)
