"""The indexing sections: chunking, extraction, and how a run writes.

The chunking values and the extractor are remembered by an index
(:mod:`kgrag.indexing.manifest`): they decide what its chunks and facts mean.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, model_validator

from kgrag.config import languages

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


class ChunkingSettings(BaseModel):
    """How documents are cut into chunks, and the tokenizer that counts them."""

    tokenizer: str = Field(
        "o200k_base",
        description="Token encoding used for chunking and budgets (bundled; never downloaded).",
    )
    chunker: Literal["token", "recursive"] = Field(
        "token", description="token: fixed token windows; recursive: separator-based, CJK aware."
    )
    size: int = Field(1200, ge=16, description="Chunk size in tokens.")
    overlap: int = Field(100, ge=0, description="Tokens shared by neighbouring chunks.")
    split_by_character: str | None = Field(
        None, description="Split on this string first, then re-split oversize pieces by tokens."
    )
    split_by_character_only: bool = Field(
        False, description="With split_by_character: do not re-split oversize pieces."
    )

    def check(self) -> None:
        """Raise ValueError (one sentence, naming the settings) when the values contradict."""
        if self.overlap >= self.size:
            raise ValueError(
                f"chunk_overlap={self.overlap} must be smaller than chunk_size={self.size}"
            )
        if self.split_by_character_only and not self.split_by_character:
            raise ValueError("split_by_character_only needs split_by_character")

    @model_validator(mode="after")
    def _consistent(self) -> ChunkingSettings:
        self.check()
        return self


class ExtractionSettings(BaseModel):
    """Turning chunks into entities and relations: extractor, format, types, language."""

    extractor: Literal["auto", "llm", "nlp"] = Field(
        "auto",
        description=(
            "llm: prompt the chat model; nlp: LLM-free NER + co-occurrence; auto: llm when a chat "
            "model is configured."
        ),
    )
    format: Literal["delimited", "json"] = Field(
        "delimited", description="Record format asked of the model."
    )
    entity_types: list[str] = Field(
        default_factory=lambda: list(DEFAULT_ENTITY_TYPES),
        description="Entity types offered to the extractor.",
    )
    language: Annotated[str, AfterValidator(languages.check)] = Field(
        "English",
        description=(
            "Language of descriptions, summaries and keywords: an English name, ISO 639-1 code "
            "or own name of a language kgrag knows (kgrag.config.languages), stored as its English name."
        ),
    )
    max_gleaning: int = Field(1, ge=0, description="Extra 'anything missed?' passes per chunk.")
    max_reasks: int = Field(
        3,
        ge=0,
        description=(
            "Times an extraction or gleaning reply that is malformed (cut off, no completion "
            "marker, most rows unusable) is asked for again, with a note saying what was wrong; "
            "malformed replies are never cached."
        ),
    )
    max_input_tokens: int = Field(
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


class IndexingSettings(BaseModel):
    """How an indexing run writes: the writer lease and parallel documents."""

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
