"""The public API is pinned: changing it must be a deliberate act."""

from __future__ import annotations

import kgrag
from kgrag import KGRag, Settings, SyncKGRag


def test_public_names_are_pinned():
    assert sorted(kgrag.__all__) == [
        "AnswerStream",
        "ConfigError",
        "CurationError",
        "DocStatus",
        "Document",
        "DocumentNotFoundError",
        "EntityNotFoundError",
        "ExtractionError",
        "IndexReport",
        "KGRag",
        "KGRagError",
        "LeaseLostError",
        "Limits",
        "LoaderError",
        "MergeNotFoundError",
        "ModelError",
        "NoIndexError",
        "NotOpenError",
        "QueryError",
        "QueryParam",
        "QueryResult",
        "Settings",
        "SettingsError",
        "StorageError",
        "StoreCorruptError",
        "SyncAnswerStream",
        "SyncKGRag",
        "UnknownBackendError",
        "WorkdirBusyError",
        "WorkerOptions",
        "WorkerReport",
        "adapt_chat",
        "adapt_embedding",
        "adapt_rerank",
    ]
    for name in kgrag.__all__:
        assert getattr(kgrag, name) is not None


def test_every_error_derives_from_the_root():
    for name in kgrag.__all__:
        obj = getattr(kgrag, name)
        if isinstance(obj, type) and name.endswith("Error"):
            assert issubclass(obj, kgrag.KGRagError)


def test_settings_are_read_at_construction_not_import(monkeypatch, tmp_path):
    monkeypatch.setenv("KGRAG_LLM_MAX_ASYNC", "7")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    s = Settings(workdir=tmp_path)
    assert s.llm.max_async == 7 and s.llm.base_url == "http://127.0.0.1:9/v1"
    assert s.resolved_llm_provider() == "openai"


def test_settings_sections_are_pinned():
    assert list(Settings.model_fields) == [
        "store",
        "postgres",
        "llm",
        "embedding",
        "rerank",
        "loading",
        "chunking",
        "extraction",
        "resolution",
        "merging",
        "indexing",
        "query",
        "cost",
        "server",
    ]


def test_sync_wrapper_indexes_and_queries(tmp_path):
    settings = Settings(
        workdir=tmp_path, llm_provider="fake", embedding_provider="fake", extractor="llm"
    )
    with SyncKGRag(settings) as rag:
        report = rag.insert(
            ["Ada Lovelace wrote notes on the Analytical Engine of Charles Babbage."]
        )
        assert len(report.processed) == 1
        result = rag.query(
            "Who wrote notes on the Analytical Engine?", mode="local", only_need_context=True
        )
        assert "Ada Lovelace" in result.context


async def test_async_facade_is_a_context_manager(tmp_path):
    settings = Settings(
        workdir=tmp_path, llm_provider="fake", embedding_provider="fake", extractor="llm"
    )
    async with KGRag(settings) as rag:
        status = await rag.status()
    assert status["graph"]["entities"] == 0
