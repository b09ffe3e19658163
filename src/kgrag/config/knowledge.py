"""The knowledge sections: merging facts into the graph, and entity resolution."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class MergeSettings(BaseModel):
    """When descriptions are summarised, and how many sources a fact keeps."""

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


class ResolutionSettings(BaseModel):
    """Entity resolution (docs/resolution.md): which duplicate entities are merged."""

    mode: Literal["off", "auto"] = Field(
        "off", description="auto: merge the surest duplicate entities at the end of each index run."
    )
    min_score: float = Field(
        0.6, ge=0, le=1, description="kgrag dedupe merges the pairs scoring at least this."
    )
    auto_min_score: float = Field(
        0.85, ge=0, le=1, description="With resolve=auto: the (higher) score a merge needs."
    )
    vector_top_k: int = Field(
        5, ge=0, description="Nearest names by vector proposed per entity (0: none)."
    )
    vector_min_sim: float = Field(
        0.92, ge=-1, le=1, description="Cosine similarity a vector neighbour needs to be proposed."
    )
