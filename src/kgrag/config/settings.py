"""Typed settings for kgrag.

One :class:`Settings` object holds every knob. It reads ``KGRAG_*``
environment variables (and a ``.env`` file in the working directory) only
when it is constructed, which entry points (the CLI, :class:`kgrag.KGRag`)
do once; nothing reads the environment at import time.

The OpenAI-compatible provider also honours ``OPENAI_BASE_URL`` and
``OPENAI_API_KEY`` the way the OpenAI SDK does, as fallbacks for
``KGRAG_LLM_BASE_URL`` / ``KGRAG_LLM_API_KEY`` (and the embedding ones).

Validation: every way in is validated the same way, keywords
(``Settings(chunk_size=...)``), overrides (:meth:`Settings.with_overrides`,
which ``KGRag(**overrides)`` and the CLI's flags use), variables and
``.env``. All problems found raise one :class:`~kgrag.errors.SettingsError`
(a :class:`~kgrag.errors.ConfigError`) with one sentence each: an unknown
keyword names the closest setting, a value out of range says what is
allowed and which variable gave it, contradicting values name both. A
``KGRAG_*`` variable that is no setting is an error when its name is close
to a setting's (a typo, :mod:`kgrag.config.check`) and ignored otherwise.

:meth:`Settings.explicit` tells the fields that were given a value from
those left at their default; an index's remembered settings fill in the
latter (:mod:`kgrag.indexing.manifest`), and :func:`setting_source` names where each
value came from (``kgrag config``).
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from kgrag.config import check as config_check
from kgrag.config import languages
from kgrag.config import server as config_server
from kgrag.errors import SettingsError
from kgrag.ingest import options as _load

DEFAULT_ENTITY_TYPES = [
    "Person",
    "Creature",
    "Organization",
    "Location",
    "Event",
    "Concept",
    "Method",
    "Content",
    "Data",
    "Artifact",
    "NaturalObject",
]


def _env(name: str, *fallbacks: str) -> AliasChoices:
    return AliasChoices(f"KGRAG_{name}", *fallbacks)


# False while Settings.with_overrides builds its copy: only the given values count.
_READ_SOURCES: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "kgrag_settings_read_sources", default=True
)


@contextmanager
def _values_only() -> Iterator[None]:
    token = _READ_SOURCES.set(False)
    try:
        yield
    finally:
        _READ_SOURCES.reset(token)


class Settings(BaseSettings):
    """Every setting kgrag has, with its default and meaning."""

    model_config = SettingsConfigDict(
        env_prefix="KGRAG_",
        env_file=".env",
        extra="ignore",
        populate_by_name=True,
    )

    # --- where things live ---------------------------------------------
    workdir: Path = Field(
        Path("./kgrag_data"), description="Folder holding the index (one SQLite file and its WAL)."
    )
    storage: str = Field(
        "sqlite",
        description="Storage backend for every role (kv, vector, graph, doc status): sqlite, postgres.",
    )
    postgres_dsn: str | None = Field(
        None,
        description="PostgreSQL connection string or URI (storage=postgres); needs pgvector.",
    )
    postgres_workspace: str | None = Field(
        None,
        description=(
            "Workspace in PostgreSQL (schema kgrag_<name>); default: the workdir's folder name."
        ),
    )
    postgres_pool_min: int = Field(
        1, ge=1, description="Connections a PostgreSQL pool keeps open (storage=postgres)."
    )
    postgres_pool_max: int = Field(
        12, ge=1, le=1000, description="Most connections a PostgreSQL pool opens at once."
    )
    postgres_reconnect_s: float = Field(
        60.0,
        gt=0,
        description=(
            "Seconds a PostgreSQL read or write waits for a lost server (restart, network cut) "
            "to answer again, retrying with backoff, before it fails."
        ),
    )
    postgres_sslmode: (
        Literal["disable", "allow", "prefer", "require", "verify-ca", "verify-full"] | None
    ) = Field(None, description="libpq sslmode for PostgreSQL (overrides the DSN's).")
    postgres_sslrootcert: str | None = Field(
        None, description="CA certificate file checking the PostgreSQL server (libpq sslrootcert)."
    )
    postgres_sslcert: str | None = Field(
        None, description="Client certificate file for PostgreSQL (libpq sslcert)."
    )
    postgres_sslkey: str | None = Field(
        None, description="Client certificate's key file for PostgreSQL (libpq sslkey)."
    )
    postgres_index_rows: int = Field(
        10_000,
        ge=1,
        description=(
            "Rows a PostgreSQL vector namespace holds before it gets an approximate index "
            "(smaller ones are searched exactly)."
        ),
    )
    postgres_hnsw_m: int = Field(
        16, ge=2, le=100, description="HNSW index: links per node (pgvector m, 2-100)."
    )
    postgres_hnsw_ef_construction: int = Field(
        64,
        ge=4,
        le=1000,
        description="HNSW index: candidate list while building (at least 2 x postgres_hnsw_m).",
    )
    postgres_hnsw_ef_search: int = Field(
        100,
        ge=1,
        le=1000,
        description=(
            "HNSW search: least candidate list; a search asks max(this, 5 x top_k), at most 1000."
        ),
    )

    # --- chat model -------------------------------------------------------
    llm_provider: str = Field(
        "auto",
        description=(
            "Chat provider: openai, ollama, fake, none, or auto (openai when an endpoint or key is "
            "configured, else none)."
        ),
    )
    llm_base_url: str | None = Field(
        None,
        validation_alias=_env("LLM_BASE_URL", "OPENAI_BASE_URL"),
        description="Base URL of the chat endpoint (OpenAI: ending in /v1).",
    )
    llm_model: str = Field("gpt-4o-mini", description="Chat model name sent to the provider.")
    llm_api_key: str | None = Field(
        None,
        validation_alias=_env("LLM_API_KEY", "OPENAI_API_KEY"),
        description="API key for the chat endpoint.",
    )
    llm_max_async: int = Field(
        4,
        ge=1,
        description="Most chat calls in flight at once, per KGRag instance (kgrag.Limits shares one budget).",
    )
    llm_timeout: float = Field(
        240.0, gt=0, description="Seconds before one chat call is abandoned and retried."
    )
    query_llm_timeout: float = Field(
        10.0,
        gt=0,
        description=(
            "Seconds a query waits to reach the chat model (its first piece, retries included) "
            "before it answers extractively, saying why; an answering model then has llm_timeout."
        ),
    )
    query_embed_timeout: float = Field(
        5.0,
        gt=0,
        description=(
            "Seconds a query waits to embed the question (retries included) before it searches "
            "the lexical (BM25) index alone, saying so."
        ),
    )
    llm_max_retries: int = Field(
        6,
        ge=0,
        description=(
            "Retries for 429 / 5xx / timeouts, with exponential backoff honouring Retry-After."
        ),
    )
    llm_max_tokens: int | None = Field(
        None, ge=1, description="Cap on completion tokens per call (stops runaway outputs)."
    )
    llm_temperature: float = Field(
        0.0, ge=0, le=2, description="Sampling temperature for every chat call."
    )
    enable_llm_cache: bool = Field(
        True, description="Cache chat answers keyed by prompt, model identity and parameters."
    )

    # --- embeddings -------------------------------------------------------
    embedding_provider: str = Field(
        "auto",
        description=(
            "Embedding provider: openai, ollama, fake, local, or auto (openai when an endpoint or "
            "key is configured, else local)."
        ),
    )
    embedding_base_url: str | None = Field(
        None,
        validation_alias=_env("EMBEDDING_BASE_URL", "OPENAI_BASE_URL"),
        description="Base URL of the embedding endpoint.",
    )
    embedding_model: str = Field("text-embedding-3-small", description="Embedding model name.")
    embedding_api_key: str | None = Field(
        None,
        validation_alias=_env("EMBEDDING_API_KEY", "OPENAI_API_KEY"),
        description="API key for the embedding endpoint.",
    )
    embedding_dim: int | None = Field(
        None, ge=1, description="Vector size; detected from the first response when unset."
    )
    embedding_batch_size: int = Field(32, ge=1, description="Texts per embedding request.")
    embedding_max_async: int = Field(
        8, ge=1, description="Most embedding requests in flight at once."
    )
    embedding_max_tokens: int = Field(
        8192,
        ge=16,
        description=(
            "Longest text the embedding model reads; longer texts are embedded in windows and "
            "averaged."
        ),
    )

    # --- reranker (optional) ---------------------------------------------
    rerank_provider: str | None = Field(
        None, description="Reranker: cohere (also Jina / vLLM compatible) or unset for none."
    )
    rerank_base_url: str | None = Field(
        None, description="Rerank endpoint URL (POST, Cohere/Jina request format)."
    )
    rerank_model: str | None = Field(None, description="Rerank model name.")
    rerank_api_key: str | None = Field(None, description="Rerank API key.")

    # --- loading files (see docs/ingestion.md) ---------------------------
    input_encoding: str | None = Field(
        None,
        description=(
            "Read every text and HTML file with this codec (a byte order mark still wins); unset: "
            "BOM, declared charset (HTML), strict UTF-8, then charset-normalizer detection."
        ),
    )
    max_file_bytes: int = Field(
        _load.DEFAULT_MAX_FILE_BYTES,
        ge=1,
        description=(
            "Files bigger than this many bytes are refused (checked with stat before reading)."
        ),
    )
    max_document_chars: int = Field(
        _load.DEFAULT_MAX_DOCUMENT_CHARS,
        ge=1,
        description="A document whose extracted text is longer is refused, not truncated.",
    )
    zip_max_total_bytes: int = Field(
        _load.DEFAULT_ZIP_MAX_TOTAL_BYTES,
        ge=1,
        description=(
            "Zip-based files (.docx, ...) that would inflate to more bytes are refused: from the"
            " declared sizes first, then counted as members inflate."
        ),
    )
    zip_max_member_bytes: int = Field(
        _load.DEFAULT_ZIP_MAX_MEMBER_BYTES,
        ge=1,
        description=(
            "One member of a zip-based file may inflate to at most this many bytes (counted as it"
            " inflates, whatever the archive declares)."
        ),
    )
    zip_max_ratio: float = Field(
        _load.DEFAULT_ZIP_MAX_RATIO,
        gt=0,
        description=(
            "Zip-based files compressed more than this ratio (whole archive or an entry over 1 MiB)"
            " are refused as zip bombs."
        ),
    )
    zip_max_entries: int = Field(
        _load.DEFAULT_ZIP_MAX_ENTRIES,
        ge=1,
        description="Zip-based files with more entries are refused.",
    )
    follow_symlinks: bool = Field(
        False,
        description=(
            "Follow symbolic links that leave the folder being indexed (loops are never followed "
            "twice); off: they are skipped with a reason."
        ),
    )

    # --- tokenizer and chunking ------------------------------------------
    tokenizer: str = Field(
        "o200k_base",
        description="Token encoding used for chunking and budgets (bundled; never downloaded).",
    )
    chunker: Literal["token", "recursive"] = Field(
        "token", description="token: fixed token windows; recursive: separator-based, CJK aware."
    )
    chunk_size: int = Field(1200, ge=16, description="Chunk size in tokens.")
    chunk_overlap: int = Field(100, ge=0, description="Tokens shared by neighbouring chunks.")
    split_by_character: str | None = Field(
        None, description="Split on this string first, then re-split oversize pieces by tokens."
    )
    split_by_character_only: bool = Field(
        False, description="With split_by_character: do not re-split oversize pieces."
    )

    # --- extraction -------------------------------------------------------
    extractor: Literal["auto", "llm", "nlp"] = Field(
        "auto",
        description=(
            "llm: prompt the chat model; nlp: LLM-free NER + co-occurrence; auto: llm when a chat "
            "model is configured."
        ),
    )
    extraction_format: Literal["delimited", "json"] = Field(
        "delimited", description="Record format asked of the model."
    )
    entity_types: list[str] = Field(
        default_factory=lambda: list(DEFAULT_ENTITY_TYPES),
        description="Entity types offered to the extractor.",
    )
    language: str = Field(
        "English",
        description=(
            "Language of descriptions, summaries and keywords: an English name, ISO 639-1 code "
            "or own name of a language kgrag knows (kgrag.config.languages), stored as its English name."
        ),
    )
    max_gleaning: int = Field(1, ge=0, description="Extra 'anything missed?' passes per chunk.")
    extract_max_reasks: int = Field(
        3,
        ge=0,
        description=(
            "Times an extraction or gleaning reply that is malformed (cut off, no completion "
            "marker, most rows unusable) is asked for again, with a note saying what was wrong; "
            "malformed replies are never cached."
        ),
    )
    max_extract_input_tokens: int = Field(
        20480,
        ge=1,
        description="Skip gleaning when the conversation would exceed this many tokens.",
    )

    max_failed_chunk_fraction: float = Field(
        0.5,
        ge=0,
        le=1,
        description=(
            "A document fails when more than this fraction of its chunks yield nothing usable; "
            "below it, it is processed with warnings."
        ),
    )

    # --- entity resolution (docs/resolution.md) ----------------------------
    resolve: Literal["off", "auto"] = Field(
        "off", description="auto: merge the surest duplicate entities at the end of each index run."
    )
    resolve_min_score: float = Field(
        0.6, ge=0, le=1, description="kgrag dedupe merges the pairs scoring at least this."
    )
    resolve_auto_min_score: float = Field(
        0.85, ge=0, le=1, description="With resolve=auto: the (higher) score a merge needs."
    )
    resolve_vector_top_k: int = Field(
        5, ge=0, description="Nearest names by vector proposed per entity (0: none)."
    )
    resolve_vector_min_sim: float = Field(
        0.92, ge=-1, le=1, description="Cosine similarity a vector neighbour needs to be proposed."
    )

    # --- merging ----------------------------------------------------------
    force_llm_summary_on_merge: int = Field(
        8,
        ge=2,
        description="Summarise descriptions once an entity/relation has this many fragments.",
    )
    summary_max_tokens: int = Field(
        1200, ge=1, description="...or once its fragments add up to this many tokens."
    )
    summary_context_size: int = Field(
        12000,
        ge=1,
        description="Most tokens sent in one summary call; more are summarised map-reduce.",
    )
    summary_length_recommended: int = Field(
        600, ge=1, description="Target summary length in tokens."
    )
    max_source_ids_per_entity: int = Field(
        200, ge=1, description="Source chunk ids kept on an entity."
    )
    max_source_ids_per_relation: int = Field(
        200, ge=1, description="Source chunk ids kept on a relation."
    )
    source_ids_limit_method: Literal["KEEP", "FIFO"] = Field(
        "KEEP", description="KEEP the oldest ids (and stop updating), or FIFO keep the newest."
    )
    max_file_paths: int = Field(75, ge=1, description="File paths kept on an entity or relation.")

    # --- pipeline ---------------------------------------------------------
    wait_for_writer: bool = Field(
        True,
        description=(
            "When another process is writing to the workdir, wait for it (True) or fail at once "
            "with an error (False)."
        ),
    )
    max_parallel_insert: int = Field(
        16, ge=1, description="Documents being extracted at once (they merge in enqueue order)."
    )

    # --- query ------------------------------------------------------------
    top_k: int = Field(
        40, ge=1, description="Entities (local) / relations (global) retrieved per query."
    )
    chunk_top_k: int = Field(20, ge=1, description="Chunks kept in the context.")
    max_entity_tokens: int = Field(6000, ge=1, description="Token budget of the entity section.")
    max_relation_tokens: int = Field(
        8000, ge=1, description="Token budget of the relation section."
    )
    max_total_tokens: int = Field(30000, ge=1, description="Token budget of the whole prompt.")
    cosine_threshold: float = Field(
        0.2, ge=-1, le=1, description="Vector hits below this similarity are dropped."
    )
    related_chunk_number: int = Field(5, ge=1, description="Chunks taken per entity / relation.")

    # --- cost (docs/cost.md) ------------------------------------------------
    prices: Annotated[dict[str, dict[str, float]], NoDecode] = Field(
        default_factory=dict,
        description=(
            "Model prices for `kgrag cost`, USD per million tokens: JSON "
            '{"gpt-4o-mini": {"prompt": 0.15, "completion": 0.6}} (a model by its name or '
            "vendor:name); without a price for a model used, money is n/a."
        ),
    )

    # --- server (kgrag serve; docs/server.md) ----------------------------
    host: str = Field("127.0.0.1", description="Address `kgrag serve` listens on.")
    port: int = Field(9621, ge=0, le=65535, description="Port `kgrag serve` listens on.")
    api_key: str | None = Field(
        None, min_length=16, description="API key opening every workspace (X-API-Key or Bearer)."
    )
    api_keys: Annotated[dict[str, list[str]], NoDecode] = Field(
        default_factory=dict,
        description='API keys bound to workspaces: JSON {"key": ["ws1", "ws2"]} ("*": all).',
    )
    jwt_secret: str | None = Field(
        None, description="HS256 secret signing account tokens (at least 32 bytes, not a default)."
    )
    accounts_file: Path | None = Field(
        None,
        description="JSON accounts: user -> {password_hash (argon2), workspaces}; enables /login.",
    )
    token_minutes: int = Field(
        720, ge=1, le=60 * 24 * 30, description="Minutes an account token from /login stays valid."
    )
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Origins allowed cross-origin calls (comma-separated); none: no CORS at all.",
    )
    max_body_mb: float = Field(
        8.0, gt=0, description="Largest request body in MiB (JSON and forms); larger: 413."
    )
    max_upload_mb: float = Field(
        100.0, gt=0, description="Largest multipart upload body in MiB; larger: 413."
    )
    create_workspaces: bool = Field(
        True, description="Create a named workspace on its first use (off: 404 for a new name)."
    )

    def __init__(self, **values: Any) -> None:
        """Read the sources (unless :meth:`with_overrides` builds a copy) and validate.

        Every problem (an unknown keyword, a ``KGRAG_*`` variable that looks
        like a misspelt setting, a value out of range, settings that
        contradict each other) raises one :class:`~kgrag.errors.SettingsError`
        listing them all, each in one sentence.
        """
        known = set(_field_of())
        problems = [
            config_check.unknown_setting(k, type(self).model_fields)
            for k in values
            if not k.startswith("_") and k not in known
        ]
        if _READ_SOURCES.get():
            problems += _variable_typos(values.get("_env_file", self.model_config.get("env_file")))
        if problems:
            raise SettingsError(problems)
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise SettingsError(config_check.describe(exc, _field_of(), env_names())) from exc

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Keyword values, then ``KGRAG_*`` variables, then ``.env`` (copies: values only)."""
        if not _READ_SOURCES.get():
            return (init_settings,)
        return (init_settings, env_settings, dotenv_settings, file_secret_settings)

    def with_overrides(self, **overrides: Any) -> Settings:
        """A validated copy with ``overrides`` applied; the environment is not read again.

        The copy's explicitly set fields (:meth:`explicit`) are this object's
        and the overridden ones, so an index's remembered settings still
        fill in the rest (:mod:`kgrag.indexing.manifest`).
        """
        if not overrides:
            return self
        values = {name: getattr(self, name) for name in self.model_fields_set}
        with _values_only():
            return type(self)(**(values | overrides))

    def explicit(self) -> frozenset[str]:
        """The fields given a value (keyword, environment or ``.env``), not left at the default."""
        return frozenset(self.model_fields_set)

    @field_validator("language")
    @classmethod
    def _language(cls, value: str) -> str:
        return languages.check(value)

    @field_validator("prices", mode="before")
    @classmethod
    def _prices(cls, value: Any) -> dict[str, dict[str, float]]:
        return config_check.prices(value)

    @field_validator("api_keys", mode="before")
    @classmethod
    def _api_keys(cls, value: Any) -> dict[str, list[str]]:
        return config_server.api_keys(value)

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _cors_origins(cls, value: Any) -> list[str]:
        return config_server.origins(value)

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError(
                f"chunk_overlap={self.chunk_overlap} must be smaller than "
                f"chunk_size={self.chunk_size}"
            )
        if self.split_by_character_only and not self.split_by_character:
            raise ValueError("split_by_character_only needs split_by_character")
        if self.postgres_pool_min > self.postgres_pool_max:
            raise ValueError(
                f"postgres_pool_min={self.postgres_pool_min} must not exceed "
                f"postgres_pool_max={self.postgres_pool_max}"
            )
        if self.postgres_hnsw_ef_construction < 2 * self.postgres_hnsw_m:
            raise ValueError(
                f"postgres_hnsw_ef_construction={self.postgres_hnsw_ef_construction} must be at "
                f"least 2 x postgres_hnsw_m={self.postgres_hnsw_m}"
            )
        return self

    # --- resolution of 'auto' -------------------------------------------
    def resolved_llm_provider(self) -> str:
        if self.llm_provider != "auto":
            return self.llm_provider
        return "openai" if (self.llm_base_url or self.llm_api_key) else "none"

    def resolved_embedding_provider(self) -> str:
        if self.embedding_provider != "auto":
            return self.embedding_provider
        return "openai" if (self.embedding_base_url or self.embedding_api_key) else "local"

    def resolved_extractor(self) -> str:
        if self.extractor != "auto":
            return self.extractor
        return "nlp" if self.resolved_llm_provider() == "none" else "llm"


@cache
def _field_of() -> dict[str, str]:
    """Every name that sets a field (its name and its aliases) mapped to the field."""
    out: dict[str, str] = {}
    for name, info in Settings.model_fields.items():
        out[name] = name
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            out.update({str(choice): name for choice in alias.choices})
    return out


@cache
def env_names() -> dict[str, list[str]]:
    """The environment variables that set each field, in the order they are tried."""
    out: dict[str, list[str]] = {name: [] for name in Settings.model_fields}
    for name, info in Settings.model_fields.items():
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            out[name] = [str(choice).upper() for choice in alias.choices]
        else:
            out[name] = [f"{config_check.PREFIX}{name.upper()}"]
    return out


def _variable_typos(env_file: Any) -> list[str]:
    """Problems for ``KGRAG_*`` names in the environment or ``.env`` that look misspelt."""
    known = {n for names in env_names().values() for n in names}
    names = set(os.environ) | set(dotenv_entries(env_file))
    return config_check.unknown_variables(names, Settings.model_fields, known)


def dotenv_entries(env_file: Any) -> dict[str, str | None]:
    """The entries of the ``.env`` file the settings read (none when it is absent)."""
    from dotenv import dotenv_values

    if not env_file:
        return {}
    files = [env_file] if isinstance(env_file, str | os.PathLike) else list(env_file)
    out: dict[str, str | None] = {}
    for path in files:
        if os.path.isfile(path):
            out.update(dotenv_values(path))
    return out


def setting_source(settings: Settings, name: str) -> str:
    """Where ``settings.name`` came from: ``environment (KGRAG_X)``, ``.env``, ``default``...

    Sources in pydantic-settings' order of precedence; a value given as a
    keyword (``KGRAG(chunk_size=...)``) is ``keyword``.
    """
    if name not in settings.explicit():
        return "default"
    environ = {key.upper() for key in os.environ}
    for variable in env_names()[name]:
        if variable in environ:
            return f"environment ({variable})"
    dotenv = {key.upper() for key in dotenv_entries(settings.model_config.get("env_file"))}
    for variable in env_names()[name]:
        if variable in dotenv:
            return f".env ({variable})"
    return "keyword"
