"""The kgrag exception tree.

Every error kgrag raises on purpose derives from :class:`KGRagError`.
Foreign exceptions (httpx, sqlite3, pypdf, ...) are translated at the
boundary where they occur, with ``raise ... from exc`` so the cause stays
visible::

    KGRagError
    ├── ConfigError            bad or inconsistent settings
    │   ├── SettingsError          settings that fail validation (one sentence each)
    │   ├── NoIndexError           a command that reads an index found none
    │   ├── UnknownBackendError    a registry name nobody registered
    │   └── MissingCapabilityError  the storage backend does not offer a needed capability
    ├── NotOpenError           a KGRag used before open() (or after close())
    ├── LoaderError            a file could not be read or is not supported
    ├── StorageError           a storage backend failed
    │   ├── StoreCorruptError      on-disk state that cannot be trusted
    │   ├── WorkdirBusyError       another process is writing to the workdir
    │   ├── ConnectionLostError    a database connection broke (the work may run again)
    │   └── DatabaseUnavailableError  the database stayed out of reach past the budget
    ├── ModelError             a model (LLM / embedding / rerank) call failed
    │   ├── ModelTimeoutError
    │   ├── ModelRateLimitError    429s that outlived the retries
    │   ├── ModelServerError       5xx that outlived the retries
    │   ├── ModelRequestError      4xx other than 429: retrying will not help
    │   └── ModelResponseError     a response we could not use
    ├── ExtractionError        a chunk's extraction failed (fails its document)
    ├── DocumentNotFoundError  a document id or path the index does not hold
    │   └── AmbiguousNameError     a name several documents answer to
    ├── CurationError          a graph edit the curation records refuse
    │   ├── EntityNotFoundError    an entity or relation the graph does not hold
    │   └── MergeNotFoundError     a merge id that names no recorded merge
    └── QueryError             a query could not be answered
"""

from __future__ import annotations

import os
import unicodedata

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Control, format (zero-width, bidi overrides), surrogate, private use, line/paragraph separators.
_ESCAPED = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})
_SURROGATE_ESCAPES = range(0xDC80, 0xDD00)  # how os.fsdecode keeps a byte that is not UTF-8


def display_name(name: str) -> str:
    """``name`` on one line, safe to print: ordinary names unchanged.

    The rules are in :mod:`kgrag.ingest.names`, which is where callers find
    it; it lives here because error messages show names too, and this module
    imports nothing of kgrag.
    """
    if name.isprintable():
        return name
    return "".join(_escape(c) for c in name)


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    if unicodedata.category(char) not in _ESCAPED:
        return char  # e.g. a non-breaking or ideographic space: printable enough
    code = ord(char)
    if code in _SURROGATE_ESCAPES:
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


class KGRagError(Exception):
    """Base class of every error kgrag raises on purpose."""


class ConfigError(KGRagError):
    """Settings are missing, malformed or contradict each other."""


class SettingsError(ConfigError):
    """Settings failed validation; ``problems`` holds one sentence per problem."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


class NoIndexError(ConfigError):
    """A command that reads an index was pointed at a place that holds none."""

    def __init__(self, workdir: str | os.PathLike[str]):
        self.workdir = workdir = os.path.abspath(workdir)
        super().__init__(
            f"no index at {workdir} (run 'kgrag index --workdir {workdir} PATH...' to create one)"
        )


class UnknownBackendError(ConfigError):
    """A registry was asked for a name it does not know."""

    def __init__(self, kind: str, name: str, known: list[str]):
        self.kind, self.name, self.known = kind, name, sorted(known)
        super().__init__(f"unknown {kind} {name!r}; known {kind}s: {', '.join(self.known)}")


class MissingCapabilityError(ConfigError):
    """A storage backend was asked for a capability it does not declare.

    ``backend`` is the storage's name, ``capability`` the missing one (its
    value, e.g. ``"work_queue"``); the message says what the caller needed it for.
    """

    def __init__(self, backend: str, capability: str, what: str, hint: str = ""):
        self.backend, self.capability = backend, capability
        super().__init__(f"the {backend} storage has no {what}" + (f"; {hint}" if hint else ""))


class NotOpenError(KGRagError):
    """A :class:`~kgrag.KGRag` method needs the index open, and it is not."""


class LoaderError(KGRagError):
    """A file could not be loaded (unsupported type, unreadable, corrupt)."""

    def __init__(self, path: str, reason: str):
        # ``path`` as given; the message shows it escaped, on one line (docs: kgrag.ingest.names)
        self.path, self.reason = path, reason
        super().__init__(f"{display_name(path)}: {display_name(reason)}")


class StorageError(KGRagError):
    """A storage backend failed."""


class StoreCorruptError(StorageError):
    """Stored state is damaged and cannot be used as it is."""


class WorkdirBusyError(StorageError):
    """Another writer holds the workdir and the caller chose not to wait."""


class LeaseLostError(StorageError):
    """A worker's lease on a document expired and another worker holds it now."""


class ConnectionLostError(StorageError):
    """A database connection broke, or none could be had; what ran on it rolled back.

    Work that failed with it may be run again whole (a transaction, a document).
    """


class DatabaseUnavailableError(StorageError):
    """The database did not answer within the reconnect budget (``postgres_reconnect_s``)."""


class ModelError(KGRagError):
    """A call to an LLM, embedding or rerank service failed.

    ``retry_after``: the wait in seconds the service asked for (429, 5xx), if any.
    ``public``: the failure in words a client may see (no endpoint address), when
    the raiser wrote them (see :func:`kgrag.llm.failures.public_reason`).
    """

    retry_after: float | None = None
    public: str | None = None


class ModelTimeoutError(ModelError):
    """The service did not answer in time (after retries)."""


class ModelRateLimitError(ModelError):
    """The service kept answering 429 (after retries)."""


class ModelServerError(ModelError):
    """The service kept answering 5xx (after retries)."""


class ModelRequestError(ModelError):
    """The service rejected the request (4xx other than 429); not retried."""


class ModelResponseError(ModelError):
    """The service answered, but the answer could not be used."""


class ExtractionError(KGRagError):
    """Extraction of a chunk failed; the chunk's document is marked failed."""


class DocumentNotFoundError(KGRagError):
    """A document id (or path pattern) names nothing in the index."""


class AmbiguousNameError(DocumentNotFoundError):
    """A document name (not an id) stands for several documents; none is chosen."""


class CurationError(KGRagError):
    """A curation request contradicts the graph or the records (see docs/curation.md)."""


class EntityNotFoundError(CurationError):
    """An entity name (or a relation's pair) that names nothing in the graph."""


class MergeNotFoundError(CurationError):
    """A merge id that names no recorded merge (see ``kgrag merges``)."""


class QueryError(KGRagError):
    """A query could not be answered."""
