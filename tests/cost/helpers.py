"""Settings and a small indexed corpus over the shipped fake models."""

from __future__ import annotations

import calendar
from pathlib import Path

from .corpus import write_corpus

CHAT, EMBED = "fake:fake", "fake-embed:384"
QUESTION = "Who designed the Bombe at Bletchley Park?"


def day(text: str) -> float:
    """Noon (UTC) of the day ``text`` (YYYY-MM-DD), as seconds since the epoch."""
    year, month, date = map(int, text.split("-"))
    return float(calendar.timegm((year, month, date, 12, 0, 0)))


def corpus(tmp_path: Path) -> list[Path]:
    return list(write_corpus(tmp_path / "docs").values())
