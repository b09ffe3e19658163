"""The index's remembered settings (kgrag.indexing.manifest), on real SQLite stores."""

from __future__ import annotations

import os

import pytest

from kgrag import KGRag
from kgrag.config.settings import Settings
from kgrag.errors import ConfigError, NoIndexError
from kgrag.indexing import manifest
from kgrag.storage.sqlite import SQLiteStorage
from kgrag.types import DocRecord, DocStatus, Document

CHINESE = "孙中山先生出生于广东省香山县。他在檀香山读书，后来到香港学医。孙中山创立了兴中会。"
ENGLISH = "Scrooge met Marley in London. Marley was dead. Bob Cratchit worked for Scrooge."


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith(("KGRAG_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def doc(text: str) -> Document:
    return Document(id=f"doc-{abs(hash(text))}", content=text, file_path="x.txt")


def test_language_detection():
    assert manifest.detect_language([doc(CHINESE)]) == "Chinese"
    assert manifest.detect_language([doc(ENGLISH)]) is None
    assert manifest.detect_language([doc(ENGLISH * 3 + "孙中山")]) is None  # a few CJK names
    assert manifest.detect_language(
        [doc("東京は日本の首都です。ここには多くの人が住んでいます。")]
    ) == ("Japanese")
    assert manifest.detect_language(
        [doc("서울은 한국의 수도입니다. 많은 사람들이 살고 있습니다.")]
    ) == ("Korean")
    assert manifest.detect_language([doc("1234 5678 !!")]) is None


def test_a_chinese_corpus_gets_the_multilingual_local_embedder():
    english = manifest.record(Settings(embedding_provider="local"), "default")
    chinese = manifest.record(Settings(embedding_provider="local", language="Chinese"), "detected")
    assert english["embedding_model"] == "minilm"
    assert (chinese["embedding_model"], chinese["embedding_dim"]) == ("e5-small", 384)
    assert chinese["language_source"] == "detected"


async def test_settle_detects_the_language_once_and_records_it(tmp_path):
    storage = SQLiteStorage(tmp_path / "idx")
    async with storage:
        settings = Settings(embedding_provider="local", workdir=tmp_path / "idx")
        settled = await manifest.settle(storage, settings, [doc(CHINESE)])
        assert settled.extraction.language == "Chinese"
        stored = await storage.get_meta("settings")
        assert stored["language"] == "Chinese" and stored["embedding_model"] == "e5-small"
        await storage.doc_status.upsert([record_of(DocStatus.PENDING)])  # a document binds it
        again = await manifest.settle(storage, settings, [doc(ENGLISH)])
        assert again is settings  # recorded already: nothing is detected twice
        assert (await storage.get_meta("settings"))["language"] == "Chinese"


def record_of(status: DocStatus) -> DocRecord:
    return DocRecord(id="doc-1", status=status, file_path="x.txt", content_length=1,
                     content_summary="x")  # fmt: skip


async def test_a_record_nothing_binds_yields_to_the_next_run(tmp_path):
    """Only failed documents (or none): the next run's settings are recorded, not refused."""
    storage = SQLiteStorage(tmp_path / "idx")
    async with storage:
        first = Settings(embedding_provider="local", chunk_size=300, language="German")
        await manifest.settle(storage, first, [doc(CHINESE)])
        await storage.set_meta("embedding_identity", "local:minilm")
        await storage.doc_status.upsert([record_of(DocStatus.FAILED)])
        assert not await manifest.bound(storage)
        remembered = await manifest.load(storage)
        with pytest.raises(ConfigError, match="built with other settings"):
            manifest.apply(Settings(embedding_provider="fake", embedding_dim=48), remembered)
        later = Settings(embedding_provider="fake", embedding_dim=48)
        applied = manifest.apply(later, remembered, provisional=True).settings
        assert (applied.embedding.provider, applied.embedding.dim) == ("fake", 48)
        # not contradicted
        assert (applied.chunking.size, applied.extraction.language) == (300, "German")
        await manifest.settle(storage, applied, [doc(ENGLISH)])
        stored = await storage.get_meta("settings")
        assert (stored["embedding_provider"], stored["embedding_dim"]) == ("fake", 48)
        assert await storage.get_meta("embedding_identity") is None  # recorded anew
        await storage.doc_status.upsert([record_of(DocStatus.PROCESSED)])
        assert await manifest.bound(storage)


async def test_a_run_with_nothing_to_index_records_nothing(tmp_path):
    storage = SQLiteStorage(tmp_path / "idx")
    async with storage:
        assert await manifest.settle(storage, Settings(embedding_dim=48), []) is not None
        assert await storage.get_meta("settings") is None


async def test_an_explicit_language_is_not_detected(tmp_path):
    storage = SQLiteStorage(tmp_path / "idx")
    async with storage:
        settings = Settings(language="English", workdir=tmp_path / "idx")
        assert (
            await manifest.settle(storage, settings, [doc(CHINESE)])
        ).extraction.language == "English"
        assert (await storage.get_meta("settings"))["language_source"] == "set"


def test_remembered_values_fill_what_was_not_set():
    remembered = manifest.record(
        Settings(embedding_provider="fake", embedding_dim=48, chunk_size=300, extractor="nlp"),
        "set",
    )
    applied = manifest.apply(Settings(), remembered)
    s = applied.settings
    assert (s.embedding.provider, s.embedding.dim, s.chunking.size, s.extraction.extractor) == (
        "fake",
        48,
        300,
        "nlp",
    )
    assert {"embedding_provider", "embedding_dim", "chunk_size", "extractor"} <= set(
        applied.from_index
    )
    kept = manifest.apply(Settings(language="German", top_k=5), remembered).settings
    assert (kept.extraction.language, kept.query.top_k, kept.chunking.size) == ("German", 5, 300)


def test_a_set_value_contradicting_the_index_is_an_error_naming_both():
    remembered = manifest.record(Settings(embedding_provider="fake", embedding_dim=48), "set")
    with pytest.raises(ConfigError) as caught:
        manifest.apply(Settings(embedding_dim=32), remembered)
    message = str(caught.value)
    assert "embedding_dim=48 in the index but 32 is set" in message
    assert "new workdir" in message and "--reset-if-settings-changed" in message
    with pytest.raises(ConfigError, match="embedding_provider='fake' in the index but 'openai'"):
        manifest.apply(Settings(embedding_base_url="http://127.0.0.1:1/v1"), remembered)
    with pytest.raises(ConfigError, match="chunk_size=1200 in the index but 600"):
        manifest.apply(Settings(chunk_size=600), remembered)


def test_another_extractor_is_no_conflict_but_a_reason_to_reset():
    remembered = manifest.record(Settings(embedding_provider="fake", extractor="nlp"), "set")
    configured = Settings(llm_provider="fake")  # an LLM configured: auto means llm
    assert manifest.apply(configured, remembered).settings.extraction.extractor == "auto"
    assert manifest.changed(configured, remembered) == [("extractor", "nlp", "llm")]
    assert manifest.changed(Settings(), remembered) == []


def test_indexes_recorded_before_the_record_keep_their_embedder():
    assert manifest.from_identity("fake-embed:48") == {
        "embedding_provider": "fake",
        "embedding_dim": 48,
    }
    assert manifest.from_identity("local:e5-small") == {
        "embedding_provider": "local",
        "embedding_model": "e5-small",
    }
    assert manifest.from_identity("openai:text-embedding-3-large@api.example.com") == {
        "embedding_provider": "openai",
        "embedding_model": "text-embedding-3-large",
    }
    assert manifest.from_identity("something-else") is None


async def test_an_old_index_opens_with_its_embedder_in_a_clean_environment(tmp_path):
    async with SQLiteStorage(tmp_path / "idx") as storage:
        await storage.set_meta("embedding_identity", "fake-embed:48")
        await storage.set_meta("extractors", ["nlp"])
        assert manifest.changed(Settings(llm_provider="fake"), await manifest.load(storage)) == [
            ("extractor", "nlp", "llm")  # an old offline demo index is rebuilt with an LLM
        ]
    async with KGRag(Settings(workdir=tmp_path / "idx")) as rag:
        assert (rag.settings.embedding.provider, rag.settings.embedding.dim) == ("fake", 48)
        assert rag.settings.extraction.extractor == "nlp"
        await rag.status()
        await rag.documents()
        await rag.check()
        await rag.export()
        assert not rag.models.embed_built  # reading the index builds no embedder


async def test_open_without_create_refuses_a_missing_index_and_creates_nothing(tmp_path):
    rag = KGRag(Settings(workdir=tmp_path / "typo"))
    with pytest.raises(NoIndexError, match=f"no index at {tmp_path / 'typo'}"):
        await rag.open(create=False)
    assert not (tmp_path / "typo").exists()


async def test_a_failed_first_open_leaves_no_empty_index(tmp_path):
    rag = KGRag(Settings(workdir=tmp_path / "idx", llm_provider="nope"))
    with pytest.raises(ConfigError, match="nope"):
        await rag.open()
    assert not (tmp_path / "idx").exists()


def test_a_provider_chosen_by_an_endpoint_names_the_variable(monkeypatch):
    remembered = manifest.record(Settings(embedding_provider="local"), "default")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    with pytest.raises(
        ConfigError, match=r"'local' in the index but 'openai' is set \(OPENAI_BASE_URL\)"
    ):
        manifest.apply(Settings(), remembered)
    monkeypatch.setenv("KGRAG_EMBEDDING_PROVIDER", "local")  # the way out: say which
    assert manifest.apply(Settings(), remembered).settings.resolved_embedding_provider() == "local"


def test_a_remembered_language_kgrag_does_not_know_says_how_to_go_on():
    remembered = manifest.record(Settings(embedding_provider="fake"), "set") | {
        "language": "Klingon"
    }
    with pytest.raises(ConfigError, match=r"records language 'Klingon'.*set KGRAG_LANGUAGE"):
        manifest.apply(Settings(), remembered)
    assert (
        manifest.apply(Settings(language="German"), remembered).settings.extraction.language
        == "German"
    )
