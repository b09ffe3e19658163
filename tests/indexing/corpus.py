"""Small deterministic corpora for pipeline tests."""

from __future__ import annotations

from pathlib import Path

# A Christmas Carol, public domain (data/README.md)
BOOK = Path(__file__).resolve().parents[2] / "data" / "christmas_carol.txt"


def book_text() -> str:
    return BOOK.read_text(encoding="utf-8")


def write_book_parts(
    folder: Path, parts: int, chars: int = 6000, offset: int = 20000
) -> list[Path]:
    """Write ``parts`` consecutive slices of the book as separate .txt files."""
    text = book_text()
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(parts):
        start = offset + i * chars
        path = folder / f"part{i:02d}.txt"
        path.write_text(text[start : start + chars], encoding="utf-8")
        paths.append(path)
    return paths
