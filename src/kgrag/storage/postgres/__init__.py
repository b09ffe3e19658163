"""The PostgreSQL backend (pgvector for vectors, plain tables for the rest).

Install with ``pip install 'kgrag[postgres]'``; see
:mod:`kgrag.storage.postgres.storage` and docs/postgres.md.
"""

from kgrag.storage.postgres.storage import PostgresStorage, workspace_name

__all__ = ["PostgresStorage", "workspace_name"]
