"""Opening an index: the parts :class:`~kgrag.api.facade.KGRag` works with, built from its settings.

:func:`open_index` opens the store, applies the settings the index
remembers (:mod:`kgrag.indexing.manifest`) and builds the tokenizer, the models,
the extractor and the indexer over them (:class:`OpenIndex`). Before an
indexing run embeds anything, :func:`settle` records the settings (first
run), rebuilds what a settled language changes and compares the
embedder's identity with the stored one.

Heavy parts are imported where they are built, so importing kgrag stays fast.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgrag.errors import ConfigError
from kgrag.indexing.costs import StoredCosts
from kgrag.indexing.indexer import IndexDeps, Indexer
from kgrag.storage.layout import EMBEDDING_IDENTITY_META, LLM_CACHE
from kgrag.storage.layout.typed import read_meta

if TYPE_CHECKING:
    from kgrag.config.settings import Settings
    from kgrag.extract.base import Extractor
    from kgrag.llm.adapters import ChatModel, EmbeddingModel, RerankModel
    from kgrag.llm.factory import Models
    from kgrag.llm.limiter import Limits
    from kgrag.llm.tokenizer import Tokenizer
    from kgrag.storage.base import Storage
    from kgrag.types import Document

NO_CHAT = (
    " a chat model: set KGRAG_LLM_PROVIDER and KGRAG_LLM_BASE_URL (or "
    "OPENAI_BASE_URL / OPENAI_API_KEY), or use KGRAG_EXTRACTOR=nlp"
)


@dataclass(frozen=True)
class Given:
    """The parts the caller brought along instead of kgrag building them (docs/embedding.md)."""

    models: dict[str, Any]  # chat / embed / rerank providers, keyed as build_models takes them
    storage: Storage | None = None  # not yet opened: opened and closed as kgrag's own
    limits: Limits | None = None  # shared between instances

    @classmethod
    def of(
        cls,
        chat: ChatModel | None,
        embed: EmbeddingModel | None,
        rerank: RerankModel | None,
        storage: Storage | None,
        limits: Limits | None,
    ) -> Given:
        """The given parts, plain (LightRAG-style) model functions adapted to providers."""
        from kgrag.llm.adapters import adapt_chat, adapt_embedding, adapt_rerank

        models: dict[str, Any] = {}
        if chat is not None:
            models["chat"] = adapt_chat(chat)
        if embed is not None:
            models["embed"] = adapt_embedding(embed)
        if rerank is not None:
            models["rerank"] = adapt_rerank(rerank)
        return cls(models, storage, limits)


@dataclass(frozen=True)
class OpenIndex:
    """The parts of one open index; :func:`settle` may replace them with rebuilt ones."""

    storage: Storage
    settings: Settings  # with the remembered settings applied
    from_index: list[str]  # the fields the index's record filled in
    tokenizer: Tokenizer
    models: Models
    extractor: Extractor
    indexer: Indexer
    costs: StoredCosts  # the models' costs, added to the stored all-time ledger


async def open_index(settings: Settings, given: Given, *, create: bool) -> OpenIndex:
    """Open the workdir's index (``create=False``: refuse a workdir that holds none).

    A set value contradicting the index's record is a :class:`ConfigError`;
    a configuration error leaves no empty index behind. No embedding model
    is built until something embeds, unless one was given.
    """
    from kgrag.errors import NoIndexError
    from kgrag.indexing import manifest
    from kgrag.storage.registry import storage_for

    storage = given.storage or storage_for(settings)
    new, new_folder = await manifest.is_new(storage, Path(settings.store.workdir))
    if new and not create:
        raise NoIndexError(settings.store.workdir)
    await storage.open()
    try:
        opened = await _build(storage, settings, given)
    except BaseException:
        await storage.close()
        if new:
            await manifest.discard(storage, Path(settings.store.workdir), new_folder)
        raise
    return opened


async def _build(storage: Storage, settings: Settings, given: Given) -> OpenIndex:
    """The parts over an opened store, with the settings its record remembers applied."""
    from kgrag.indexing import manifest
    from kgrag.llm.factory import build_models
    from kgrag.llm.tokenizer import get_tokenizer

    chat_given = given.models.get("chat") is not None
    remembered = await manifest.load(storage)
    provisional = remembered is not None and not await manifest.bound(storage)
    applied = manifest.apply(
        settings, remembered, chat_injected=chat_given, provisional=provisional
    )
    s = applied.settings
    tokenizer = get_tokenizer(s.chunking.tokenizer)
    models = build_models(s, storage.kv(LLM_CACHE), limits=given.limits, **given.models)
    if models.embed_built:  # a given embedder: compare it at once
        await check_embedding_identity(storage, models, record=False)
    extractor = build_extractor(s, models, tokenizer, applied.from_index)
    indexer = new_indexer(storage, s, models, tokenizer, extractor)
    costs = StoredCosts(storage, models.ledger)
    return OpenIndex(storage, s, applied.from_index, tokenizer, models, extractor, indexer, costs)


async def settle(opened: OpenIndex, docs: list[Document], given: Given) -> OpenIndex:
    """Before an indexing run embeds anything: record (first run) and check the settings.

    The first run into a workdir settles the language (detected when
    unset) and records the settings (:func:`kgrag.indexing.manifest.settling`); a
    changed language rebuilds what depends on it (the local embedder's
    default, the prompts): the parts returned are then new ones. The
    embedder is built before anything is recorded, so a run that cannot
    build it leaves no record; and until a document binds the index
    (:func:`kgrag.indexing.manifest.bound`), a later run records its own settings.
    Every run compares the embedder's identity.
    """
    from kgrag.extract.missing import MissingChatExtractor
    from kgrag.indexing import manifest

    if isinstance(opened.extractor, MissingChatExtractor):
        raise opened.extractor.error
    settled = await manifest.settling(opened.storage, opened.settings, docs)
    if settled.settings is not opened.settings:
        opened = await _rebuilt(opened, settled.settings, given)
    _ = opened.models.embed.identity  # builds the embedder: one that cannot be built fails here
    await manifest.keep(opened.storage, settled)
    nothing_to_index = settled.fresh and settled.record is None
    await check_embedding_identity(opened.storage, opened.models, record=not nothing_to_index)
    return opened


async def _rebuilt(opened: OpenIndex, settings: Settings, given: Given) -> OpenIndex:
    """The parts for settled ``settings``: new models (same ledger and limits), extractor, indexer."""
    from kgrag.llm.factory import build_models

    old = opened.models
    models = build_models(
        settings,
        opened.storage.kv(LLM_CACHE),
        ledger=old.ledger,
        limits=old.limits,
        **given.models,
    )
    await old.aclose()
    extractor = build_extractor(settings, models, opened.tokenizer, opened.from_index)
    indexer = new_indexer(opened.storage, settings, models, opened.tokenizer, extractor)
    return replace(opened, settings=settings, models=models, extractor=extractor, indexer=indexer)


async def check_embedding_identity(
    storage: Storage, models: Models, *, record: bool = True
) -> None:
    """Refuse an embedder whose vectors would not compare with the stored ones.

    Builds the embedding provider, so it runs when something is about to
    embed (an indexing run) or the embedder was given, never for status.
    ``record``: store the identity when the index has none yet.
    """
    # Provider and model decide what vectors mean; the host serving them does not.
    identity = models.embed.identity.split("@", 1)[0]
    stored = await read_meta(storage, EMBEDDING_IDENTITY_META, str)
    if stored is None:
        if record:
            await storage.set_meta(EMBEDDING_IDENTITY_META, identity)
    elif stored.split("@", 1)[0] != identity:
        raise ConfigError(
            f"this index was built with embeddings from {stored!r}, but the "
            f"configured embedder is {identity!r}; vectors would not be "
            "comparable. Use the same embedding settings or a new workdir."
        )


def extractor_kind(settings: Settings, models: Models) -> str:
    """``llm`` or ``nlp``: 'auto' means llm when a chat model exists (configured or given)."""
    if settings.extraction.extractor == "auto" and models.chat is not None:
        return "llm"
    return settings.resolved_extractor()


def build_extractor(
    settings: Settings, models: Models, tokenizer: Tokenizer, from_index: list[str]
) -> Extractor:
    """The extractor; without a chat model, the LLM one is a stand-in that fails on use.

    So an index built with an LLM can still be read, queried, checked
    and exported where no LLM is configured; indexing into it says why not.
    """
    if extractor_kind(settings, models) == "nlp":
        from kgrag.extract.nlp import NLPExtractor

        return NLPExtractor()
    if models.chat is None:
        from kgrag.extract.missing import MissingChatExtractor

        needs = (
            "this index was built with the LLM extractor, which needs"
            if "extractor" in from_index
            else "extractor 'llm' needs"
        )
        return MissingChatExtractor(ConfigError(needs + NO_CHAT))
    from kgrag.extract.llm_extractor import LLMExtractor

    return LLMExtractor.from_settings(models.chat, settings, tokenizer)


def new_indexer(
    storage: Storage,
    settings: Settings,
    models: Models,
    tokenizer: Tokenizer,
    extractor: Extractor,
) -> Indexer:
    """The indexer over these parts (it records which kind of extractor built each fact)."""
    return Indexer(
        IndexDeps(
            storage=storage,
            extractor=extractor,
            extractor_kind=extractor_kind(settings, models),
            chat=models.chat,
            embed=models.embed,
            tokenizer=tokenizer,
            settings=settings,
        )
    )
