"""A saved index of the format before the redesign, opened by today's code.

``saved_index/workdir`` was built by the tree before the redesign
(``scripts/golden.py --build-saved-index``) and is committed. The golden
section copies it to a temporary folder, opens it with the current code
(no migration step is run by hand: if one is needed, opening must run it),
and records its documents, status, export and query outputs.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import Any

from kgrag import KGRag, Settings

from .normalise import compact, dump_json

SAVED = Path(__file__).resolve().parent / "saved_index" / "workdir"
FAKE = {"llm_provider": "fake", "embedding_provider": "fake", "extractor": "llm"}
TEXTS = {
    "scrooge.txt": "Ebenezer Scrooge is a miser in London. Bob Cratchit works for Scrooge "
    "at the counting house. Scrooge keeps the counting house cold.",
    "marley.txt": "Jacob Marley was the business partner of Scrooge. Marley died seven "
    "years ago in London. The ghost of Marley visits Scrooge on Christmas Eve.",
    "fred.txt": "Fred is the nephew of Scrooge. Fred invites Scrooge to Christmas dinner "
    "in London. Scrooge refuses and says Christmas is humbug.",
    "spirits.txt": "Three spirits visit Scrooge: the Ghost of Christmas Past, the Ghost of "
    "Christmas Present and the Ghost of Christmas Yet to Come.",
}
QUESTIONS = ["Who is Fred?", "Who visits Scrooge on Christmas Eve?", "Where did Marley die?"]
MODES = ("mix", "naive")


async def _build(workdir: Path) -> None:
    async with KGRag(Settings(workdir=workdir, **FAKE)) as rag:
        await rag.insert(list(TEXTS.values()), list(TEXTS))


def build_saved_index(workdir: Path = SAVED) -> None:
    """Write the saved index (run with the tree whose format it pins)."""
    shutil.rmtree(workdir, ignore_errors=True)
    asyncio.run(_build(workdir))
    (workdir / "kgrag.lock").unlink(missing_ok=True)


async def _record(rag: KGRag) -> dict[str, Any]:
    queries: dict[str, Any] = {}
    for mode in MODES:
        for question in QUESTIONS:
            answer = await rag.query(question, mode=mode)
            queries[f"{mode}: {question}"] = {
                "data": compact(await rag.query_data(question, mode=mode)),
                "answer": answer.answer,
            }
    return {
        "documents": await rag.documents(),
        "export": await rag.export(timestamps=False),
        "queries": queries,
    }


def write_saved_index(out: Path) -> None:
    """Open a copy of the saved index; write what it holds and answers into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kgrag-golden-") as tmp:
        roots = [tmp, str(Path(tmp).resolve())]
        workdir = Path(tmp) / "workdir"
        shutil.copytree(SAVED, workdir)
        record = asyncio.run(_opened(workdir))
    for name, value in record.items():
        (out / f"{name}.json").write_text(dump_json(value, roots), encoding="utf-8")


async def _opened(workdir: Path) -> dict[str, Any]:
    async with KGRag(Settings(workdir=workdir, **FAKE)) as rag:
        return await _record(rag)
