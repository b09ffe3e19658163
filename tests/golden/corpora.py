"""The golden corpora: small committed texts, each with a few questions (corpora/README.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CAROL = REPO / "data" / "christmas_carol.txt"
CAROL_CHARS = 12_000  # the book's opening (title page and most of Stave One)


@dataclass(frozen=True)
class Corpus:
    """Documents (id, path label, text) and the questions asked of them."""

    name: str
    ids: list[str]
    paths: list[str]
    texts: list[str]
    questions: list[str]


def _passages(name: str) -> Corpus:
    data = json.loads((HERE / "corpora" / f"{name}.json").read_text(encoding="utf-8"))
    passages = data["passages"]
    return Corpus(
        name,
        [f"{name}-{i:02d}" for i in range(len(passages))],
        [f"{name}/{p['title']}.txt" for p in passages],
        [f"{p['title']}\n\n{p['text']}" for p in passages],
        [q["question"] for q in data["questions"]],
    )


def carol() -> Corpus:
    """The opening of A Christmas Carol, cut at a paragraph break."""
    text = CAROL.read_text(encoding="utf-8")
    cut = text.rfind("\n\n", 0, CAROL_CHARS)
    return Corpus(
        "carol",
        ["carol-opening"],
        ["christmas_carol.txt"],
        [text[:cut]],
        ["Who was Jacob Marley?", "What does Scrooge say about Christmas?"],
    )


def corpora() -> list[Corpus]:
    """Every golden corpus, in a fixed order."""
    return [carol(), *(_passages(n) for n in ("hotpotqa", "musique", "cmrc"))]
