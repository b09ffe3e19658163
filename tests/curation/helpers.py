"""Small documents whose names the fake extractor finds, and index helpers."""

from __future__ import annotations

from functools import partial
from typing import Any

from kgrag.api.facade import KGRag
from kgrag.maintenance.export import dumps
from tests.support.settings import PARAGRAPHS, fake_settings

DOC_A = "Ebenezer Scrooge met Bob Cratchit in London."
DOC_B = "Scrooge paid Cratchit in London. Ebenezer Scrooge and Scrooge counted coins."
DOC_C = "Scrooge visited Fezziwig Company."


settings = partial(fake_settings, **PARAGRAPHS, max_gleaning=0)


async def insert(rag: KGRag, **docs: str) -> None:
    """Index ``docs`` (id -> text); ids double as file paths."""
    ids = sorted(docs)
    report = await rag.insert([docs[i] for i in ids], file_paths=ids, ids=ids)
    assert report.ok


async def graph(rag: KGRag) -> dict[str, Any]:
    """Entities by name and relations by pair, from the export."""
    data = await rag.export(timestamps=False)
    return {
        "entities": {e["name"]: e for e in data["entities"]},
        "relations": {(r["src"], r["tgt"]): r for r in data["relations"]},
    }


async def sound(rag: KGRag) -> str:
    """The export text, after asserting that ``check`` passes."""
    report = await rag.check()
    assert report.ok, report.problems
    return dumps(await rag.export(timestamps=False))


_CONS, _VOWELS = "bdfgklmnprstvz", "aeiou"


def made_up(n: int) -> str:
    """A capitalised made-up word, distinct for every ``n`` (three syllables)."""
    syllables = [c + v for c in _CONS for v in _VOWELS]
    parts = [syllables[(n // len(syllables) ** k) % len(syllables)] for k in range(3)]
    return "".join(parts).capitalize()


def synthetic(n: int) -> tuple[dict[str, str], list[tuple[str, list[str]]]]:
    """``n`` documents, each naming one person twice (full and short name) and a town.

    With the groups that merge each short name into its full name, and every
    fifth town into the next (so parallel edges collapse and weights add up).
    """
    docs: dict[str, str] = {}
    groups: list[tuple[str, list[str]]] = []
    towns = [made_up(50_000 + j) for j in range(max(2, n // 5))]
    for i in range(n):
        first, last, town = made_up(2 * i), made_up(2 * i + 1), towns[i % len(towns)]
        docs[f"d{i:04d}"] = (
            f"{first} {last} met {towns[0]} traders in {town}. "
            f"The next day {last} counted coins in {town}."
        )
        groups.append((f"{first} {last}", [last]))
    groups += [(towns[j], [towns[j + 1]]) for j in range(1, len(towns) - 1, 5)]
    return docs, groups
