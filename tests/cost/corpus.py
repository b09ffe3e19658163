"""Small documents for the cost tests, written to real files."""

from __future__ import annotations

from pathlib import Path

TEXTS = {
    "ada.txt": (
        "Ada Lovelace wrote the first published notes on the Analytical Engine. "
        "Charles Babbage designed the Analytical Engine in London. "
        "Lovelace corresponded with Babbage for years about the engine and its programs."
    ),
    "turing.txt": (
        "Alan Turing worked at Bletchley Park during the war. "
        "At Bletchley Park, Turing and Gordon Welchman designed the Bombe to read Enigma. "
        "Turing later read the notes of Ada Lovelace on the Analytical Engine in Manchester."
    ),
}
CHANGED = (
    "Ada Lovelace translated an article by Luigi Menabrea about the Analytical Engine. "
    "Her notes on the Analytical Engine included an algorithm for Bernoulli numbers."
)


def write_corpus(folder: Path) -> dict[str, Path]:
    """The two documents in ``folder``, by file name."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, text in TEXTS.items():
        paths[name] = folder / name
        paths[name].write_text(text, encoding="utf-8")
    return paths
