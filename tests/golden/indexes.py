"""Goldens of an indexed corpus: its exports, ``query_data`` in every mode, and answers.

Each corpus is indexed twice, offline: ``llm`` (the fake chat model extracts;
it also writes the answers) and ``nlp`` (the rule-based NLP extractor and no
chat model, so answers are extractive). Both use the fake embedder. Only
public entry points are used (``KGRag``, ``Settings``, ``QueryParam``), so the
same code runs against the tree before and after a refactor.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgrag import KGRag, Settings

from .corpora import Corpus
from .normalise import compact, dump_json, normalise_text

MODES = ("naive", "local", "global", "hybrid", "mix", "ppr", "path", "bypass", "auto")
EXTRACTORS = {
    "llm": {"llm_provider": "fake", "embedding_provider": "fake", "extractor": "llm"},
    "nlp": {"llm_provider": "none", "embedding_provider": "fake", "extractor": "nlp"},
}
# json for every index; the other formats (renderings of the same data) for these two
EXPORTS = {"json": "export.json"}
EVERY_EXPORT = EXPORTS | {"graphml": "export.graphml", "md": "export.md", "csv": "export-csv"}
EVERY_FORMAT_FOR = {("carol", "llm"), ("cmrc", "nlp")}


def settings(workdir: Path, extractor: str) -> Settings:
    """The settings an index of this kind is built and queried with."""
    return Settings(workdir=workdir, **EXTRACTORS[extractor])


async def build(rag: KGRag, corpus: Corpus) -> Any:
    """Index ``corpus`` into ``rag``; the report."""
    return await rag.insert(corpus.texts, corpus.paths, ids=corpus.ids)


async def write_exports(rag: KGRag, out: Path, roots: list[str], formats: dict[str, str]) -> None:
    """The export ``formats`` (format -> file or folder name), without timestamps, into ``out``."""
    tmp = Path(roots[0]) / "exports"
    for fmt, name in formats.items():
        target = tmp / name
        written = await rag.export_to(target, format=fmt, timestamps=False)
        for path in sorted(written):
            rel = path.relative_to(tmp)
            dest = out / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            text = path.read_text(encoding="utf-8")
            dest.write_text(normalise_text(text, roots), encoding="utf-8")


def _references(given: list[dict[str, Any]], data: dict[str, Any]) -> Any:
    """The answer's references: the cited numbers when they equal the context's otherwise."""
    bare = [{k: v for k, v in r.items() if k != "cited"} for r in given]
    if bare == [{k: v for k, v in r.items() if k != "cited"} for r in data.get("references", [])]:
        return {"as_in_data_cited": [r.get("reference_id") for r in given if r.get("cited")]}
    return given


def _result(result: Any, data: dict[str, Any]) -> dict[str, Any]:
    """The parts of a ``QueryResult`` a user sees (cost and timings are left out)."""
    return {
        "kind": result.kind,
        "mode": result.mode,
        "answer": result.answer,
        "references": _references(result.references, data),
        "keywords": result.keywords,
        "extractive": result.extractive,
        "no_context": result.no_context,
        "fallback_reason": result.fallback_reason,
        "retrieval_note": result.retrieval_note,
        "coverage": result.coverage,
        "invalid_citations": result.invalid_citations,
    }


async def write_queries(rag: KGRag, questions: list[str], out: Path, roots: list[str]) -> None:
    """``query_data`` and the answer for every question in every mode (one file per mode)."""
    for mode in MODES:
        data: list[dict[str, Any]] = []
        for question in questions:
            # overrides, not a QueryParam: the defaults then come from Settings
            context = await rag.query_data(question, mode=mode)
            answer = await rag.query(question, mode=mode, include_references=True)
            data.append({"question": question, "data": context, "result": _result(answer, context)})
        text = dump_json(compact(data), roots)
        (out / f"query-{mode}.json").write_text(text, encoding="utf-8")


async def write_index(corpus: Corpus, extractor: str, roots: list[str], out: Path) -> None:
    """Build ``corpus`` with ``extractor`` under ``roots[0]``; write its goldens into ``out``.

    ``roots``: the temporary folder (as given and resolved), which must hold
    an empty ``exports`` folder; ``out`` must exist.
    """
    tmp = Path(roots[0])
    async with KGRag(settings(tmp / "workdir", extractor)) as rag:
        await build(rag, corpus)
        every = (corpus.name, extractor) in EVERY_FORMAT_FOR
        await write_exports(rag, out, roots, EVERY_EXPORT if every else EXPORTS)
        await write_queries(rag, corpus.questions, out, roots)
