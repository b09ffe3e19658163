"""Typed settings for kgrag, in sections.

One :class:`Settings` object holds every knob, grouped in one pydantic
model per section (``settings.chunking.size``, ``settings.llm.model``,
``settings.server.port``...; :data:`~kgrag.config.sections.SECTIONS`). It reads ``KGRAG_*``
environment variables (and a ``.env`` file in the working directory) only
when it is constructed, which entry points (the CLI, :class:`kgrag.KGRag`,
the server) do once; nothing reads the environment at import time.

Every setting keeps one flat name (:mod:`kgrag.config.fields`): the keyword
``Settings(chunk_size=...)`` and :meth:`Settings.with_overrides` take, the
variable ``KGRAG_CHUNK_SIZE`` sets, ``kgrag config`` prints and an index
remembers. :meth:`Settings.value` reads a setting by that name. Reading it
as an attribute (``settings.chunk_size``) still works for code written
before the sections, with a :class:`DeprecationWarning`.

The OpenAI-compatible provider also honours ``OPENAI_BASE_URL`` and
``OPENAI_API_KEY`` the way the OpenAI SDK does, as fallbacks for
``KGRAG_LLM_BASE_URL`` / ``KGRAG_LLM_API_KEY`` (and the embedding ones).

Validation: every way in is validated the same way, keywords, overrides
(which ``KGRag(**overrides)`` and the CLI's flags use), variables and
``.env``. All problems found raise one :class:`~kgrag.errors.SettingsError`
(a :class:`~kgrag.errors.ConfigError`) with one sentence each: an unknown
keyword names the closest setting, a value out of range says what is
allowed and which variable gave it, contradicting values name both. A
``KGRAG_*`` variable that is no setting is an error when its name is close
to a setting's (a typo, :mod:`kgrag.config.check`) and ignored otherwise.

:meth:`Settings.explicit` tells the settings that were given a value from
those left at their default; an index's remembered settings fill in the
latter (:mod:`kgrag.indexing.manifest`), and :func:`setting_source` names
where each value came from (``kgrag config``).
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING, cast

from pydantic import BaseModel, Field, PrivateAttr

from kgrag.config import sources
from kgrag.config.fields import FIELDS, SettingValue
from kgrag.config.indexing import DEFAULT_ENTITY_TYPES
from kgrag.config.sections import (
    ChunkingSettings,
    CostSettings,
    EmbeddingSettings,
    ExtractionSettings,
    IndexingSettings,
    LLMSettings,
    LoadingSettings,
    MergeSettings,
    PostgresSettings,
    QuerySettings,
    RerankSettings,
    ResolutionSettings,
    ServerSettings,
    StoreSettings,
)
from kgrag.config.sources import dotenv_entries, env_names

__all__ = ["DEFAULT_ENTITY_TYPES", "Settings", "dotenv_entries", "env_names", "setting_source"]


class Settings(BaseModel):
    """Every setting kgrag has, in sections; built from flat keywords and the environment."""

    store: StoreSettings = Field(default_factory=StoreSettings)
    postgres: PostgresSettings = Field(default_factory=PostgresSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    rerank: RerankSettings = Field(default_factory=RerankSettings)
    loading: LoadingSettings = Field(default_factory=LoadingSettings)
    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    extraction: ExtractionSettings = Field(default_factory=ExtractionSettings)
    resolution: ResolutionSettings = Field(default_factory=ResolutionSettings)
    merging: MergeSettings = Field(default_factory=MergeSettings)
    indexing: IndexingSettings = Field(default_factory=IndexingSettings)
    query: QuerySettings = Field(default_factory=QuerySettings)
    cost: CostSettings = Field(default_factory=CostSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)

    _explicit: frozenset[str] = PrivateAttr(default_factory=frozenset)

    def __init__(self, **values: object) -> None:
        """Read the sources (unless :meth:`with_overrides` builds a copy) and validate.

        ``values`` are flat keywords (``chunk_size=...``). Every problem (an
        unknown keyword, a ``KGRAG_*`` variable that looks like a misspelt
        setting, a value out of range, settings that contradict each other)
        raises one :class:`~kgrag.errors.SettingsError` listing them all,
        each in one sentence.
        """
        flat, explicit = sources.read(values)
        super().__init__(**sources.grouped(flat, explicit))
        self._explicit = explicit

    def with_overrides(self, **overrides: object) -> Settings:
        """A validated copy with ``overrides`` (flat keywords) applied; the environment is not read.

        The copy's explicitly set settings (:meth:`explicit`) are this
        object's and the overridden ones, so an index's remembered settings
        still fill in the rest (:mod:`kgrag.indexing.manifest`).
        """
        if not overrides:
            return self
        values = {name: self.value(name) for name in self._explicit}
        with sources.values_only():
            return type(self)(**(values | overrides))

    def explicit(self) -> frozenset[str]:
        """The flat names given a value (keyword, environment or ``.env``), not left at the default."""
        return self._explicit

    def value(self, name: str) -> SettingValue:
        """The value of the setting whose flat name is ``name`` (``chunk_size``)."""
        place = FIELDS[name]
        return cast("SettingValue", getattr(getattr(self, place.section), place.field))

    # --- resolution of 'auto' -------------------------------------------
    def resolved_llm_provider(self) -> str:
        llm = self.llm
        if llm.provider != "auto":
            return llm.provider
        return "openai" if (llm.base_url or llm.api_key) else "none"

    def resolved_embedding_provider(self) -> str:
        embedding = self.embedding
        if embedding.provider != "auto":
            return embedding.provider
        return "openai" if (embedding.base_url or embedding.api_key) else "local"

    def resolved_extractor(self) -> str:
        if self.extraction.extractor != "auto":
            return self.extraction.extractor
        return "nlp" if self.resolved_llm_provider() == "none" else "llm"

    if not TYPE_CHECKING:  # flat reads for code written before the sections

        def __getattr__(self, name: str) -> object:
            place = FIELDS.get(name)
            if place is None:
                return super().__getattr__(name)
            warnings.warn(
                f"Settings.{name} is deprecated; read settings.{place.section}.{place.field} "
                f"(or settings.value({name!r}))",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(getattr(self, place.section), place.field)


def setting_source(settings: Settings, name: str) -> str:
    """Where the setting ``name`` (flat) came from: ``environment (KGRAG_X)``, ``.env``, ``default``...

    Sources in pydantic-settings' order of precedence; a value given as a
    keyword (``KGRAG(chunk_size=...)``) is ``keyword``.
    """
    if name not in settings.explicit():
        return "default"
    environ = {key.upper() for key in os.environ}
    for variable in env_names()[name]:
        if variable in environ:
            return f"environment ({variable})"
    dotenv = {key.upper() for key in dotenv_entries(sources.ENV_FILE)}
    for variable in env_names()[name]:
        if variable in dotenv:
            return f".env ({variable})"
    return "keyword"
