"""The one way a test builds ``Settings``: the fake models, and what the test changes.

``fake_settings(workdir, **overrides)`` runs on the shipped deterministic
fakes (no network) with LLM extraction (``FAKE_ENV``: the same for a
``kgrag`` command); ``http_settings(workdir, base_url)`` sends every chat
and embedding call to a fake OpenAI-compatible server. Both take the flat
keywords of the public constructor (``chunk_size=40``...), which win over
the defaults here. A folder whose tests share more settings names them
once, as a preset passed on::

    settings = partial(fake_settings, **PARAGRAPHS, max_gleaning=0)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgrag.config import Settings

FAKE_MODELS: dict[str, Any] = {
    "llm_provider": "fake",
    "embedding_provider": "fake",
    "extractor": "llm",
}
# the fake models as the environment of a ``kgrag`` command (the extractor follows the chat)
FAKE_ENV: dict[str, str] = {"KGRAG_LLM_PROVIDER": "fake", "KGRAG_EMBEDDING_PROVIDER": "fake"}
# a chunk per paragraph (a blank line), whatever its length
PARAGRAPHS: dict[str, Any] = {"split_by_character": "\n\n", "split_by_character_only": True}
# chunks of a few sentences, so a short text makes several
SMALL_CHUNKS: dict[str, Any] = {"chunk_size": 40, "chunk_overlap": 0}


def fake_settings(workdir: Path | str, **overrides: Any) -> Settings:
    """Settings on the fake chat model and embedder, LLM extraction; ``overrides`` win."""
    return Settings(workdir=workdir, **(FAKE_MODELS | overrides))


def http_settings(workdir: Path | str, base_url: str, **overrides: Any) -> Settings:
    """Settings that send every chat and embedding call to the fake server at ``base_url``."""
    served: dict[str, Any] = {
        "llm_provider": "openai",
        "llm_base_url": base_url,
        "llm_api_key": "test",
        "embedding_provider": "openai",
        "embedding_base_url": base_url,
        "embedding_api_key": "test",
        "chunk_size": 400,
        "chunk_overlap": 40,
    }
    return fake_settings(workdir, **(served | overrides))
