"""A small index built with the shipped fake models, and ways to look at a store."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from kgrag.api.blocking import SyncKGRag
from kgrag.config.settings import Settings
from kgrag.llm.fake import FakeChatProvider, FakeEmbeddingProvider
from kgrag.maintenance.export import dumps, export_graph
from tests.indexing.lifecycle_corpus import document, lifecycle_settings, write

QUESTION = "Who met Bruno Keller in Zurich?"
TRICKY = (
    'Alice Moreau wrote "R&D <notes>" about 刘备 and Zephyr Robotics.\n\nÜnïcödé — 🎄 met Lyon.'
)


def build_index(workdir: Path, docs: Path, count: int = 6) -> Path:
    """Index ``count`` overlapping documents (and one awkward one) into ``workdir``."""
    paths = [write(docs, f"d{i}.txt", document([i, i + 1, i + 3])) for i in range(count)]
    paths.append(write(docs, "tricky.txt", TRICKY))
    with SyncKGRag(lifecycle_settings(workdir)) as rag:
        assert rag.index_paths(paths).ok
        rag.delete([rag.documents()["documents"][0]["id"]])  # a gap in the enqueue numbers
    return workdir


async def export_text(storage: Any) -> str:
    """The canonical export, timestamps included."""
    return dumps(await export_graph(storage))


def sqlite_export(workdir: Path) -> str:
    """The canonical export of the SQLite index in ``workdir``."""
    with SyncKGRag(lifecycle_settings(workdir)) as rag:
        return dumps(rag.export())


def answer(settings: Settings) -> tuple[str, list[str]]:
    """The answer to :data:`QUESTION` and what it was built from (no LLM cache).

    Items the search scores equal come in the order the store holds them,
    which a copy need not keep: the items are compared as a sorted list.
    """
    with SyncKGRag(settings.with_overrides(enable_llm_cache=False)) as rag:
        result = rag.query(QUESTION, mode="mix")
        data = rag.query_data(QUESTION, mode="mix")
    found = [f"entity {e['entity_name']}" for e in data["entities"]]
    found += [f"relation {r['src_id']} / {r['tgt_id']}" for r in data["relations"]]
    found += [f"chunk {c['chunk_id']}" for c in data["chunks"]]
    return result.answer, sorted(found)


@contextmanager
def model_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Count every call to the fake chat and embedding models inside the block."""
    calls: Counter[str] = Counter()
    chat, embed = FakeChatProvider.chat, FakeEmbeddingProvider.embed

    async def counted_chat(self: Any, request: Any) -> Any:
        calls["chat"] += 1
        return await chat(self, request)

    async def counted_embed(self: Any, texts: Any, kind: Any = "document") -> Any:
        calls["embed"] += 1
        return await embed(self, texts, kind)

    with monkeypatch.context() as m:
        m.setattr(FakeChatProvider, "chat", counted_chat)
        m.setattr(FakeEmbeddingProvider, "embed", counted_embed)
        yield calls
