"""Re-asking malformed extraction replies through the real chat stack and its cache.

Unit tests drive :class:`LLMExtractor` through a real :class:`ChatService`
(cache, retry, limiter, ledger) over a scripted provider; the last test
runs the project's fake OpenAI-compatible server with half its extraction
replies garbled.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest

from kgrag.config.settings import Settings
from kgrag.extract.llm_extractor import LLMExtractor, reply_problem
from kgrag.extract.prompts import extraction_messages
from kgrag.ingest.chunking import make_chunks_for_settings
from kgrag.ingest.ids import chunk_id, doc_id
from kgrag.llm.cache import LLMCache, MemoryKV
from kgrag.llm.factory import build_models
from kgrag.llm.ledger import Ledger
from kgrag.llm.limiter import PriorityLimiter
from kgrag.llm.service import ChatService
from kgrag.llm.tokenizer import get_tokenizer
from kgrag.storage.registry import open_storage
from kgrag.types import Chunk, Document, Extraction
from tests.support.chat import ScriptedChat
from tests.support.settings import http_settings
from tests.synth import run_synth, synth_stats

TOK = get_tokenizer()
TEXT = "Scrooge was the partner of Marley. Bob Cratchit is Scrooge's clerk."
CHUNK = Chunk(id=chunk_id(TEXT), doc_id="doc-1", content=TEXT, tokens=TOK.count(TEXT), order=0)
GOOD = (
    "entity<|#|>Scrooge<|#|>Person<|#|>A miser.\n"
    "entity<|#|>Marley<|#|>Person<|#|>Scrooge's late partner.\n"
    "relation<|#|>Scrooge<|#|>Marley<|#|>partnership<|#|>They were partners.\n<|COMPLETE|>"
)
GARBAGE = "Here are the entities and relationships I identified in the passage above."
BOOK = Path(__file__).resolve().parents[2] / "data" / "christmas_carol.txt"


def _stack(provider: ScriptedChat, kv: MemoryKV) -> tuple[LLMExtractor, ChatService]:
    service = ChatService(provider, cache=LLMCache(kv), limiter=PriorityLimiter(4), ledger=Ledger())
    return LLMExtractor(service, TOK, max_gleaning=0), service


def _texts(kv: MemoryKV) -> list[str]:
    return [row["text"] for row in kv.data.values()]


def _calls(service: ChatService) -> tuple[int, int]:
    snap = service.ledger.snapshot()["extract"]
    return snap["calls"], snap["cache_hits"]


async def test_garbage_then_good_caches_only_the_good_reply():
    provider = ScriptedChat(GARBAGE, GOOD, GARBAGE)
    kv = MemoryKV()
    extractor, service = _stack(provider, kv)
    ex = await extractor.extract(CHUNK)
    assert len(ex.entities) == 2 and ex.error is None
    assert ex.warnings == ["extract: reply malformed (no completion marker), recovered on re-ask 1"]
    assert _texts(kv) == [GOOD] and _calls(service) == (2, 0)
    # A deterministic model garbles the first request again; the repair is now a cache hit.
    again = await extractor.extract(CHUNK)
    assert again == ex and _texts(kv) == [GOOD] and _calls(service) == (3, 1)


async def test_garbage_forever_caches_nothing():
    provider = ScriptedChat(GARBAGE, GARBAGE + " (2)", GARBAGE + " (3)", GARBAGE + " (4)")
    kv = MemoryKV()
    extractor, service = _stack(provider, kv)
    ex = await extractor.extract(CHUNK)
    assert ex.error == "extract: reply unparseable after 4 attempts (no completion marker)"
    assert any("malformed in 4 attempts" in w for w in ex.warnings)
    assert kv.data == {} and _calls(service) == (4, 0)


async def test_cached_garbage_from_an_old_run_is_ignored_and_reasked():
    provider = ScriptedChat(GARBAGE, GOOD)
    kv = MemoryKV()
    extractor, service = _stack(provider, kv)
    # An older kgrag cached the garbled reply under the extraction prompt's key.
    await service.chat(extraction_messages(TEXT), role="extract")
    assert _texts(kv) == [GARBAGE]
    ex = await extractor.extract(CHUNK)
    assert len(ex.entities) == 2 and ex.warnings == []  # the fresh answer was good at once
    assert _texts(kv) == [GOOD] and _calls(service) == (2, 0)


async def test_empty_but_well_formed_reply_costs_one_call_and_is_cached():
    provider = ScriptedChat("<|COMPLETE|>")
    kv = MemoryKV()
    extractor, service = _stack(provider, kv)
    first, second = await extractor.extract(CHUNK), await extractor.extract(CHUNK)
    assert first == second == Extraction()
    assert _texts(kv) == ["<|COMPLETE|>"] and _calls(service) == (1, 1)


# --- against the fake OpenAI-compatible server ------------------------------


def _chunks(settings: Settings, parts: int = 8, chars: int = 4000) -> list[Chunk]:
    text, chunks = BOOK.read_text(encoding="utf-8"), []
    for i in range(parts):
        part = text[20000 + i * chars : 20000 + (i + 1) * chars]
        doc = Document(id=doc_id(part), content=part, file_path=f"part{i:02d}.txt")
        chunks += make_chunks_for_settings(doc, settings, TOK)
    return chunks


async def _bad_cached(storage, fmt: str) -> list[str]:
    """Cached extract / glean replies the health judge rejects."""
    kv = storage.kv("llm_cache")
    rows = [await kv.get(key) for key in await kv.keys()]
    return [
        row["text"]
        for row in rows
        if row["role"] in ("extract", "glean") and reply_problem(row["text"], fmt)
    ]


async def _extract_all(fmt: str, *flags: str) -> tuple[list[Extraction], dict, list[str]]:
    """Extract every chunk as kgrag.api.facade wires the extractor; (extractions, stats, bad cached)."""
    with run_synth(*flags) as base_url, tempfile.TemporaryDirectory() as tmp:
        settings = http_settings(tmp, base_url, extraction_format=fmt, llm_max_retries=8)
        storage = open_storage(settings.store.backend, Path(tmp))
        await storage.open()
        try:
            models = build_models(settings, storage.kv("llm_cache"))
            extractor = LLMExtractor.from_settings(models.chat, settings, TOK)
            found = await asyncio.gather(*(extractor.extract(c) for c in _chunks(settings)))
            stats, bad = synth_stats(base_url), await _bad_cached(storage, fmt)
            await models.aclose()
        finally:
            await storage.close()
    return list(found), stats, bad


def _names(found: list[Extraction]) -> set[str]:
    return {e.name for ex in found for e in ex.entities}


@pytest.mark.parametrize("fmt", ["delimited", "json"])
async def test_half_garbage_server_loses_little_and_hides_nothing(fmt):
    clean, _, _ = await _extract_all(fmt)
    garbled, stats, bad = await _extract_all(fmt, "--garbage-rate", "0.5")
    assert stats["garbage"] > 10 and bad == []
    assert all(ex.error is None and not ex.warnings for ex in clean)
    recovered = [ex for ex in garbled if any("recovered on re-ask" in w for w in ex.warnings)]
    failed = [ex for ex in garbled if any("malformed in" in w for w in ex.warnings)]
    assert len(recovered) >= 5
    # every chunk kept records, or says why not
    assert all(ex.entities or ex.relations or ex.error for ex in garbled)
    assert all(ex.error is None or ex in failed for ex in garbled)
    assert abs(len(_names(garbled)) - len(_names(clean))) <= 0.1 * len(_names(clean))
    # the index is reproducible: the same server gives the same extractions
    again, _, _ = await _extract_all(fmt, "--garbage-rate", "0.5")
    assert again == garbled
