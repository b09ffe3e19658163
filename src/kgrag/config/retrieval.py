"""The query sections: retrieval budgets and deadlines, and the price table for costs."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, Field
from pydantic_settings import NoDecode

from kgrag.config import check


class QuerySettings(BaseModel):
    """What a query retrieves, its token budgets, and how long it waits for the models."""

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
    llm_timeout: float = Field(
        10.0,
        gt=0,
        description=(
            "Seconds a query waits to reach the chat model (its first piece, retries included) "
            "before it answers extractively, saying why; an answering model then has llm_timeout."
        ),
    )
    embed_timeout: float = Field(
        5.0,
        gt=0,
        description=(
            "Seconds a query waits to embed the question (retries included) before it searches "
            "the lexical (BM25) index alone, saying so."
        ),
    )


Prices = Annotated[dict[str, dict[str, float]], NoDecode, BeforeValidator(check.prices)]


class CostSettings(BaseModel):
    """Model prices for ``kgrag cost`` (docs/cost.md)."""

    prices: Prices = Field(
        default_factory=dict,
        description=(
            "Model prices for `kgrag cost`, USD per million tokens: JSON "
            '{"gpt-4o-mini": {"prompt": 0.15, "completion": 0.6}} (a model by its name or '
            "vendor:name); without a price for a model used, money is n/a."
        ),
    )
