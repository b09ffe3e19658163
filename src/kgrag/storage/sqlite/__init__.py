"""The embedded default storage backend: SQLite (one file per workdir).

:class:`SQLiteStorage` keeps key-value namespaces, vectors, the graph,
document status, a BM25 index and small metadata in ``<workdir>/kgrag.db``;
:func:`memory_storage` is the same code on an in-memory database.
"""

from kgrag.storage.sqlite.storage import DB_FILENAME, SQLiteStorage, memory_storage

__all__ = ["DB_FILENAME", "SQLiteStorage", "memory_storage"]
