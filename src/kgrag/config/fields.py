"""The one table that knows each setting's flat name and its place in a section.

A setting has one flat name: the keyword ``Settings(chunk_size=...)``
takes, the ``KGRAG_CHUNK_SIZE`` variable sets, ``kgrag config`` prints and
an index's remembered settings store. Code reads it from its section
(``settings.chunking.size``). :data:`FIELDS` maps every flat name to
``(section, field)``, in the order ``kgrag config`` lists them; nothing
else spells that mapping.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

PREFIX = "KGRAG_"

# what one setting holds: every section field's type is one of these (tests/config pins it)
SettingValue = (
    str | int | float | bool | Path | list[str] | dict[str, list[str]] | dict[str, dict[str, float]]
) | None


class Place(NamedTuple):
    """Where a flat setting lives: ``settings.<section>.<field>``."""

    section: str
    field: str


def _rows(section: str, *pairs: str) -> list[tuple[str, Place]]:
    """``flat=field`` pairs (or a bare name when both are the same) of one section."""
    out = []
    for pair in pairs:
        flat, _, field = pair.partition("=")
        out.append((flat, Place(section, field or flat)))
    return out


# flat name -> (section, field), in the order `kgrag config` prints them
FIELDS: dict[str, Place] = dict(
    _rows("store", "workdir", "storage=backend")
    + _rows(
        "postgres",
        *(
            f"postgres_{name}={name}"
            for name in (
                "dsn",
                "workspace",
                "pool_min",
                "pool_max",
                "reconnect_s",
                "sslmode",
                "sslrootcert",
                "sslcert",
                "sslkey",
                "index_rows",
                "hnsw_m",
                "hnsw_ef_construction",
                "hnsw_ef_search",
            )
        ),
    )
    + _rows(
        "llm",
        "llm_provider=provider",
        "llm_base_url=base_url",
        "llm_model=model",
        "llm_api_key=api_key",
        "llm_max_async=max_async",
        "llm_timeout=timeout",
    )
    + _rows("query", "query_llm_timeout=llm_timeout", "query_embed_timeout=embed_timeout")
    + _rows(
        "llm",
        "llm_max_retries=max_retries",
        "llm_max_tokens=max_tokens",
        "llm_temperature=temperature",
        "enable_llm_cache=enable_cache",
    )
    + _rows(
        "embedding",
        *(
            f"embedding_{name}={name}"
            for name in (
                "provider",
                "base_url",
                "model",
                "api_key",
                "dim",
                "batch_size",
                "max_async",
                "max_tokens",
            )
        ),
    )
    + _rows(
        "rerank",
        *(f"rerank_{name}={name}" for name in ("provider", "base_url", "model", "api_key")),
    )
    + _rows(
        "loading",
        "input_encoding=encoding",
        "max_file_bytes",
        "max_document_chars",
        "zip_max_total_bytes",
        "zip_max_member_bytes",
        "zip_max_ratio",
        "zip_max_entries",
        "follow_symlinks",
    )
    + _rows(
        "chunking",
        "tokenizer",
        "chunker",
        "chunk_size=size",
        "chunk_overlap=overlap",
        "split_by_character",
        "split_by_character_only",
    )
    + _rows(
        "extraction",
        "extractor",
        "extraction_format=format",
        "entity_types",
        "language",
        "max_gleaning",
        "extract_max_reasks=max_reasks",
        "max_extract_input_tokens=max_input_tokens",
        "max_failed_chunk_fraction",
    )
    + _rows(
        "resolution",
        "resolve=mode",
        "resolve_min_score=min_score",
        "resolve_auto_min_score=auto_min_score",
        "resolve_vector_top_k=vector_top_k",
        "resolve_vector_min_sim=vector_min_sim",
    )
    + _rows(
        "merging",
        "force_llm_summary_on_merge",
        "summary_max_tokens",
        "summary_context_size",
        "summary_length_recommended",
        "max_source_ids_per_entity",
        "max_source_ids_per_relation",
        "source_ids_limit_method",
        "max_file_paths",
    )
    + _rows("indexing", "wait_for_writer", "max_parallel_insert")
    + _rows(
        "query",
        "top_k",
        "chunk_top_k",
        "max_entity_tokens",
        "max_relation_tokens",
        "max_total_tokens",
        "cosine_threshold",
        "related_chunk_number",
    )
    + _rows("cost", "prices")
    + _rows(
        "server",
        "host",
        "port",
        "api_key",
        "api_keys",
        "jwt_secret",
        "accounts_file",
        "token_minutes",
        "cors_origins",
        "max_body_mb",
        "max_upload_mb",
        "create_workspaces",
    )
)

# settings that more than their own KGRAG_ variable sets, in the order they are tried
FALLBACKS: dict[str, tuple[str, ...]] = {
    "llm_base_url": ("OPENAI_BASE_URL",),
    "llm_api_key": ("OPENAI_API_KEY",),
    "embedding_base_url": ("OPENAI_BASE_URL",),
    "embedding_api_key": ("OPENAI_API_KEY",),
}


def env_names(flat: str) -> list[str]:
    """The environment variables that set ``flat``, in the order they are tried."""
    return [f"{PREFIX}{flat.upper()}", *FALLBACKS.get(flat, ())]


def flat_name(section: str, field: str) -> str:
    """The flat name of ``settings.<section>.<field>`` (KeyError when there is none)."""
    return _FLAT_OF[Place(section, field)]


_FLAT_OF = {place: flat for flat, place in FIELDS.items()}
