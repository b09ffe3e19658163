"""The storage sections: where the index lives, and the PostgreSQL backend's knobs."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, model_validator

SslMode = Literal["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]


class StoreSettings(BaseModel):
    """Where the index lives and which backend holds it."""

    workdir: Path = Field(
        Path("./kgrag_data"), description="Folder holding the index (one SQLite file and its WAL)."
    )
    backend: str = Field(
        "sqlite",
        description="Storage backend for every role (kv, vector, graph, doc status): sqlite, postgres.",
    )


class PostgresSettings(BaseModel):
    """The PostgreSQL backend (storage=postgres): connection, pool, TLS, vector index."""

    dsn: str | None = Field(
        None,
        description="PostgreSQL connection string or URI (storage=postgres); needs pgvector.",
    )
    workspace: str | None = Field(
        None,
        description=(
            "Workspace in PostgreSQL (schema kgrag_<name>); default: the workdir's folder name."
        ),
    )
    pool_min: int = Field(
        1, ge=1, description="Connections a PostgreSQL pool keeps open (storage=postgres)."
    )
    pool_max: int = Field(
        12, ge=1, le=1000, description="Most connections a PostgreSQL pool opens at once."
    )
    reconnect_s: float = Field(
        60.0,
        gt=0,
        description=(
            "Seconds a PostgreSQL read or write waits for a lost server (restart, network cut) "
            "to answer again, retrying with backoff, before it fails."
        ),
    )
    sslmode: SslMode | None = Field(
        None, description="libpq sslmode for PostgreSQL (overrides the DSN's)."
    )
    sslrootcert: str | None = Field(
        None, description="CA certificate file checking the PostgreSQL server (libpq sslrootcert)."
    )
    sslcert: str | None = Field(
        None, description="Client certificate file for PostgreSQL (libpq sslcert)."
    )
    sslkey: str | None = Field(
        None, description="Client certificate's key file for PostgreSQL (libpq sslkey)."
    )
    index_rows: int = Field(
        10_000,
        ge=1,
        description=(
            "Rows a PostgreSQL vector namespace holds before it gets an approximate index "
            "(smaller ones are searched exactly)."
        ),
    )
    hnsw_m: int = Field(
        16, ge=2, le=100, description="HNSW index: links per node (pgvector m, 2-100)."
    )
    hnsw_ef_construction: int = Field(
        64,
        ge=4,
        le=1000,
        description="HNSW index: candidate list while building (at least 2 x postgres_hnsw_m).",
    )
    hnsw_ef_search: int = Field(
        100,
        ge=1,
        le=1000,
        description=(
            "HNSW search: least candidate list; a search asks max(this, 5 x top_k), at most 1000."
        ),
    )

    def check(self) -> None:
        """Raise ValueError (one sentence, naming the settings) when the values contradict."""
        if self.pool_min > self.pool_max:
            raise ValueError(
                f"postgres_pool_min={self.pool_min} must not exceed "
                f"postgres_pool_max={self.pool_max}"
            )
        if self.hnsw_ef_construction < 2 * self.hnsw_m:
            raise ValueError(
                f"postgres_hnsw_ef_construction={self.hnsw_ef_construction} must be at "
                f"least 2 x postgres_hnsw_m={self.hnsw_m}"
            )

    @model_validator(mode="after")
    def _consistent(self) -> PostgresSettings:
        self.check()
        return self
