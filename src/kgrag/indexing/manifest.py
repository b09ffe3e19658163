"""The settings an index remembers: how it was built, so later commands need not be told.

The first indexing run into a workdir records, in the store's meta table
(key ``settings``), what decides the meaning of what is stored: the
embedder (provider, model, dimension, base URL), the extractor, the
language, the tokenizer and the chunking settings. The record binds once
a document is committed, queued or being processed (:func:`bound`);
until then it is provisional: a first run that stopped (no model, every
file skipped, every document failed) blocks nothing, and the next run
that indexes records its own settings. Every later open reads them back
(:func:`apply`):

- a remembered field the caller did not set (no keyword, no ``KGRAG_*``
  variable, no ``.env`` entry: :meth:`Settings.explicit`) takes the
  remembered value, so ``kgrag status`` or ``kgrag query`` in a clean shell
  use the embedder the index was built with;
- a field that was set and contradicts one that decides what vectors and
  chunks mean (:data:`MUST_MATCH`) is a :class:`~kgrag.errors.ConfigError`
  naming both values and the ways out. The extractor, the language and the
  embedding base URL may differ: the graph records which extractor built
  each fact, and the host serving a model does not change its vectors.

Indexes built before this record held only ``embedding_identity``
(``local:e5-small``, ``fake-embed:48``, ``openai:model@host``); :func:`load`
reads the embedder out of it, and the extractor out of the graph's list of
extractors when it names only one.

When ``KGRAG_LANGUAGE`` is not set, the first run detects the language of
its first documents (:func:`detect_language`); a Chinese corpus then gets
the multilingual local embedder, whose default depends on the language.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kgrag.config import languages
from kgrag.config.fields import SettingValue
from kgrag.config.settings import Settings
from kgrag.errors import ConfigError
from kgrag.storage.base import Storage
from kgrag.storage.layout import EMBEDDING_IDENTITY_META, EXTRACTORS_META, SETTINGS_META
from kgrag.types import Document

META_KEY = SETTINGS_META
LEGACY_KEY = EMBEDDING_IDENTITY_META
VERSION = 1

EMBEDDER = ("embedding_provider", "embedding_model", "embedding_dim", "embedding_base_url")
CHUNKING = (
    "tokenizer",
    "chunker",
    "chunk_size",
    "chunk_overlap",
    "split_by_character",
    "split_by_character_only",
)
REMEMBERED = (*EMBEDDER, "extractor", "language", *CHUNKING)
MUST_MATCH = ("embedding_provider", "embedding_model", "embedding_dim", *CHUNKING)

_LLM_FIELDS = frozenset({"llm_provider", "llm_base_url", "llm_api_key"})
# variables that choose a setting without naming it ('auto' resolved by an endpoint or key)
_IMPLIED_BY = {
    "embedding_provider": [
        "KGRAG_EMBEDDING_BASE_URL",
        "KGRAG_EMBEDDING_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
    ]
}
_REMOTE_EMBEDDING_FIELDS = frozenset({"embedding_base_url", "embedding_api_key"})

# an index's record (meta ``settings``): flat setting name -> value, with version and language_source
Remembered = dict[str, SettingValue]
Conflict = tuple[str, SettingValue, SettingValue]  # (setting, the index's value, the value set)


@dataclass
class Applied:
    """Settings after the index's remembered ones were filled in."""

    settings: Settings
    remembered: Remembered | None  # None: the index records nothing yet
    from_index: list[str] = field(default_factory=list)  # fields that took the index's value


# -- what an index records ---------------------------------------------------------------


async def load(storage: Storage) -> Remembered | None:
    """The remembered settings, from the record or an older index's embedding identity."""
    stored = await storage.get_meta(META_KEY)
    if isinstance(stored, dict):
        return dict(stored)
    identity = await storage.get_meta(LEGACY_KEY)
    legacy = from_identity(identity) if isinstance(identity, str) else None
    built_by = await storage.get_meta(EXTRACTORS_META)  # the graph's extractors, kept apart
    if legacy is not None and isinstance(built_by, list) and len(built_by) == 1:
        legacy["extractor"] = built_by[0]
    return legacy


def from_identity(identity: str) -> Remembered | None:
    """The embedder an ``embedding_identity`` names (indexes built before the record)."""
    kind, _, rest = identity.partition(":")
    if kind == "fake-embed" and rest.isdigit():
        return {"embedding_provider": "fake", "embedding_dim": int(rest)}
    if kind == "local" and rest:
        return {"embedding_provider": "local", "embedding_model": rest}
    if kind in ("openai", "ollama") and rest:
        return {"embedding_provider": kind, "embedding_model": rest.split("@", 1)[0]}
    return None


def record(settings: Settings, language_source: str) -> Remembered:
    """What the first indexing run stores: the resolved values, not 'auto'."""
    provider = settings.resolved_embedding_provider()
    out: Remembered = {
        "version": VERSION,
        "embedding_provider": provider,
        "embedding_model": embedder_model(
            provider, settings.embedding.model, settings.extraction.language
        ),
        "embedding_dim": embedder_dim(provider, settings),
        "embedding_base_url": settings.embedding.base_url if provider in _REMOTE else None,
        "extractor": settings.resolved_extractor(),
        "language": settings.extraction.language,
        "language_source": language_source,
    }
    out.update({name: settings.value(name) for name in CHUNKING})
    return out


_REMOTE = ("openai", "ollama")


def embedder_model(provider: str, model: str | None, language: str | None) -> str | None:
    """The model name that decides the vectors: a local alias resolved, none for fakes."""
    if provider == "fake":
        return None
    if provider == "local":
        from kgrag.llm.local import local_model_for

        return local_model_for(model, language).name
    return model


def embedder_dim(provider: str, settings: Settings) -> int | None:
    """The vector size when known before embedding (local models: their size)."""
    if provider == "local":
        from kgrag.llm.local import local_model_for

        return local_model_for(settings.embedding.model, settings.extraction.language).dim
    if provider == "fake":
        return settings.embedding.dim or 384
    return settings.embedding.dim


def describe_embedder(remembered: Mapping[str, object]) -> str:
    """``local e5-small``, ``fake (dim 48)``, ``openai text-embedding-3-small``."""
    provider = str(remembered.get("embedding_provider") or "?")
    model, dim = remembered.get("embedding_model"), remembered.get("embedding_dim")
    if model:
        return f"{provider} {model}"
    return f"{provider} (dim {dim})" if dim else provider


# -- what the caller set ---------------------------------------------------------------


def explicit_embedder(settings: Settings) -> str | None:
    """The embedding provider the caller chose, or None when it was left to the index."""
    given = settings.explicit()
    if "embedding_provider" in given and settings.embedding.provider != "auto":
        return settings.embedding.provider
    if given & _REMOTE_EMBEDDING_FIELDS and settings.resolved_embedding_provider() == "openai":
        return "openai"
    return None


def explicit_extractor(settings: Settings, chat_injected: bool = False) -> str | None:
    """The extractor the caller chose (directly, or by configuring a chat model), or None."""
    given = settings.explicit()
    if "extractor" in given and settings.extraction.extractor != "auto":
        return settings.extraction.extractor
    if chat_injected:
        return "llm"
    if given & _LLM_FIELDS:
        return settings.resolved_extractor()
    return None


def _chosen(settings: Settings, remembered: Remembered, chat_injected: bool) -> Remembered:
    """The caller's explicit values of the remembered fields, compared like the record."""
    given = settings.explicit()
    provider = explicit_embedder(settings)
    out: Remembered = {name: settings.value(name) for name in REMEMBERED if name in given}
    out.pop("embedding_provider", None)
    if provider is not None:
        out["embedding_provider"] = provider
    out.pop("extractor", None)
    extractor = explicit_extractor(settings, chat_injected)
    if extractor is not None:
        out["extractor"] = extractor
    if "embedding_model" in out:
        kind = str(provider or remembered.get("embedding_provider") or "openai")
        out["embedding_model"] = embedder_model(
            kind, settings.embedding.model, settings.extraction.language
        )
    return out


def conflicts(
    settings: Settings, remembered: Remembered, *, chat_injected: bool = False
) -> list[Conflict]:
    """``(field, remembered, set)`` for every set value that contradicts the index."""
    chosen = _chosen(settings, remembered, chat_injected)
    out: list[Conflict] = []
    for name in MUST_MATCH:
        if name not in chosen or remembered.get(name) is None or chosen[name] is None:
            continue
        if chosen[name] != remembered[name]:
            out.append((name, remembered[name], chosen[name]))
    if any(name == "embedding_provider" for name, *_ in out):  # the rest follows from it
        out = [c for c in out if c[0] not in ("embedding_model", "embedding_dim")]
    return out


def changed(
    settings: Settings, remembered: Remembered | None, *, chat_injected: bool = False
) -> list[Conflict]:
    """Conflicts, and a different extractor: what ``--reset-if-settings-changed`` resets for."""
    if not remembered:
        return []
    out = conflicts(settings, remembered, chat_injected=chat_injected)
    extractor = explicit_extractor(settings, chat_injected)
    if extractor is not None and remembered.get("extractor") not in (None, extractor):
        out.append(("extractor", remembered["extractor"], extractor))
    return out


def conflict_error(workdir: Path, found: list[Conflict]) -> ConfigError:
    """One line: what the index holds, what is set, and the ways out."""
    from kgrag.config.check import first_set
    from kgrag.config.sources import env_names

    parts = []
    for name, old, new in found:
        names = env_names()[name] + _IMPLIED_BY.get(name, [])
        variable = first_set(names)
        source = f" ({variable})" if variable else ""
        parts.append(f"{name}={old!r} in the index but {new!r} is set{source}")
    return ConfigError(
        f"the index at {os.path.abspath(workdir)} was built with other settings: "
        + "; ".join(parts)
        + ". Unset them to use the index's values, use a new workdir, or run "
        "'kgrag index --reset-if-settings-changed PATH...' to rebuild this index"
    )


def apply(
    settings: Settings,
    remembered: Remembered | None,
    *,
    chat_injected: bool = False,
    provisional: bool = False,
) -> Applied:
    """``settings`` with the index's remembered values filled in where none was set.

    Raises :class:`ConfigError` when a set value contradicts the index.
    ``provisional``: the record binds nothing yet (:func:`bound`); set values
    win over it and only what they leave open is filled in (:func:`yielding`).
    """
    if not remembered:
        return Applied(settings, remembered)
    if provisional:
        remembered = yielding(settings, remembered, chat_injected)
    found = conflicts(settings, remembered, chat_injected=chat_injected)
    if found:
        raise conflict_error(settings.store.workdir, found)
    chosen = _chosen(settings, remembered, chat_injected)
    supplied = [n for n in REMEMBERED if n not in chosen and remembered.get(n) is not None]
    fill = {n: remembered[n] for n in supplied if settings.value(n) != remembered[n]}
    if "language" in fill and languages.canonical(str(fill["language"])) is None:
        raise ConfigError(
            f"the index at {os.path.abspath(settings.store.workdir)} records language "
            f"{fill['language']!r}, which is not a language kgrag knows: set KGRAG_LANGUAGE "
            "to one it knows (kgrag.config.languages)"
        )
    return Applied(settings.with_overrides(**fill), remembered, supplied)


def yielding(settings: Settings, remembered: Remembered, chat_injected: bool = False) -> Remembered:
    """A provisional record without what the caller's settings contradict.

    A contradicted embedder field takes the whole embedder with it (a model
    or size belongs to its provider); a contradicted chunking field goes
    alone. A language the record did not have set goes too: the run that
    commits the first document detects its own.
    """
    found = {name for name, *_ in conflicts(settings, remembered, chat_injected=chat_injected)}
    drop = set(found) | (set(EMBEDDER) if found & set(EMBEDDER) else set())
    if remembered.get("language_source") != "set":
        drop |= {"language", "language_source"}
    return {name: value for name, value in remembered.items() if name not in drop}


# -- the first run -------------------------------------------------------------------------

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_LETTER = re.compile(r"[^\W\d_]")
SAMPLE_CHARS = 20_000
CJK_SHARE = 0.3


def detect_language(docs: Sequence[Document]) -> str | None:
    """``Chinese`` (or Japanese, Korean) when over 30% of the first documents' letters are CJK.

    None when they hold no letters, or too few CJK ones to say (English,
    the default, stays).
    """
    sample = "".join(d.content[:SAMPLE_CHARS] for d in docs[:20])[:SAMPLE_CHARS]
    letters = len(_LETTER.findall(sample))
    han, kana, hangul = (len(p.findall(sample)) for p in (_HAN, _KANA, _HANGUL))
    if not letters or (han + kana + hangul) / letters <= CJK_SHARE:
        return None
    if hangul > han + kana:
        return "Korean"
    return "Japanese" if kana > 0.1 * (han + kana) else "Chinese"


@dataclass(frozen=True)
class Settling:
    """What an indexing run settles before it embeds anything."""

    settings: Settings  # to index with (a detected language filled in)
    record: Remembered | None  # to store (:func:`keep`); None: the index's record stands
    fresh: bool  # nothing bound the index yet: its stored embedder identity goes too


async def bound(storage: Storage) -> bool:
    """Whether the index's record binds: a document is committed, queued or being processed.

    Until then (nothing indexed, or only failed documents: a first run that
    stopped on a missing model, skipped every file or failed every document)
    the record is provisional, and the next run that indexes adopts its own
    settings (:func:`settling`). A graph with manual entities binds too.
    """
    counts = await storage.doc_status.counts()
    if any(counts.get(status, 0) for status in _BINDING):
        return True
    return await storage.graph.node_count() > 0


_BINDING = ("processed", "pending", "processing")


async def settling(storage: Storage, settings: Settings, docs: Sequence[Document]) -> Settling:
    """The settings an indexing run uses, and the record it stores (none when one binds).

    A run into an index that nothing binds records its own settings,
    detecting the language of its documents when none was set; a run with
    no document to index records nothing. An index that binds keeps its
    record (an older index without one gets it, with no detection).
    """
    if await bound(storage):
        if await storage.get_meta(META_KEY) is not None:
            return Settling(settings, None, False)
        return Settling(settings, record(settings, _language_source(settings)), False)
    if not docs:
        return Settling(settings, None, True)
    source = _language_source(settings)
    if source == "default":
        language = detect_language(docs)
        if language is not None and language != settings.extraction.language:
            settings, source = settings.with_overrides(language=language), "detected"
    return Settling(settings, record(settings, source), True)


def _language_source(settings: Settings) -> str:
    return "set" if "language" in settings.explicit() else "default"


async def keep(storage: Storage, settled: Settling) -> None:
    """Store what :func:`settling` decided (call under the writer lease)."""
    if settled.fresh:
        await storage.set_meta(LEGACY_KEY, None)  # recorded anew by the first embedding check
    if settled.record is not None:
        await storage.set_meta(META_KEY, settled.record)


async def settle(storage: Storage, settings: Settings, docs: Sequence[Document]) -> Settings:
    """:func:`settling`, then :func:`keep`: the settings to index with."""
    settled = await settling(storage, settings, docs)
    await keep(storage, settled)
    return settled.settings


# -- starting afresh -----------------------------------------------------------------------


async def is_new(storage: Storage, workdir: Path) -> tuple[bool, bool]:
    """Whether opening ``storage`` would create its index, and the workdir folder too."""
    if await storage.exists():
        return False, False
    return True, not _there(workdir)


async def discard(storage: Storage, workdir: Path, folder_too: bool) -> None:
    """Delete an index just created (and closed) by a failed open, and its new folder."""
    await storage.destroy()
    if folder_too:
        _remove_empty(workdir)


def _there(folder: Path) -> bool:
    return folder.exists()


def _remove_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not empty: something else lives there
        folder.rmdir()


async def reset_if_changed(
    settings: Settings, on_wait: Callable[[str], None] | None = None
) -> list[str]:
    """Empty the workdir's index when the set embedder, extractor or chunking differ from it.

    Returns one phrase per difference (nothing: the index was kept). The
    store is deleted under the writer lease; the next open starts afresh.
    """
    from kgrag.storage.registry import storage_for

    storage: Storage = storage_for(settings)
    if not await storage.exists():
        return []
    await storage.open()
    try:
        found = changed(settings, await load(storage))
        if found:
            async with storage.writer(wait=settings.indexing.wait_for_writer, on_wait=on_wait):
                await storage.close()
                await storage.destroy()
    finally:
        await storage.close()
    return [f"{name} {old!r} -> {new!r}" for name, old, new in found]
