"""Small documents whose names the fake extractor finds, and index helpers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgrag.api import KGRag
from kgrag.config import Settings
from kgrag.lifecycle.export import dumps

DOC_A = "Ebenezer Scrooge met Bob Cratchit in London."
DOC_B = "Scrooge paid Cratchit in London. Ebenezer Scrooge and Scrooge counted coins."
DOC_C = "Scrooge visited Fezziwig Company."


def settings(workdir: Path, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "workdir": workdir,
        "llm_provider": "fake",
        "embedding_provider": "fake",
        "extractor": "llm",
        "split_by_character": "\n\n",
        "split_by_character_only": True,
        "max_gleaning": 0,
    }
    values.update(extra)
    return Settings(**values)


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
