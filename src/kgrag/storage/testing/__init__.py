"""A conformance suite every storage backend inherits.

Each class holds the tests of one role and asks for a pytest fixture
``storage``: an opened :class:`~kgrag.storage.base.Storage`. A backend's
test module subclasses the classes it supports and overrides that one
fixture::

    class TestMyBackend(StorageConformance):
        @pytest.fixture
        async def storage(self, tmp_path):
            s = MyStorage(tmp_path)
            await s.open()
            yield s
            await s.close()

Property tests (hypothesis) share one storage across examples, so each
example uses a fresh namespace or clears what it uses first.

The tests of each role live in their own module; this package re-exports them.
"""

from __future__ import annotations

from kgrag.storage.testing.capabilities import (
    IdentityConformance,
    KeyClaimsConformance,
    ManyWritersConformance,
    VectorIndexBuildConformance,
    WorkQueueConformance,
)
from kgrag.storage.testing.common import StorageFixture
from kgrag.storage.testing.graph import GraphStoreConformance
from kgrag.storage.testing.kv import KVStoreConformance, MetaConformance
from kgrag.storage.testing.status import DocStatusConformance, LexicalConformance
from kgrag.storage.testing.transactions import TransactionConformance
from kgrag.storage.testing.vectors import VectorStoreConformance
from kgrag.storage.testing.writer import WriterConformance

__all__ = [
    "DocStatusConformance",
    "GraphStoreConformance",
    "IdentityConformance",
    "KVStoreConformance",
    "KeyClaimsConformance",
    "LexicalConformance",
    "ManyWritersConformance",
    "MetaConformance",
    "StorageConformance",
    "StorageFixture",
    "TransactionConformance",
    "VectorIndexBuildConformance",
    "VectorStoreConformance",
    "WorkQueueConformance",
    "WriterConformance",
]


class StorageConformance(
    KVStoreConformance,
    MetaConformance,
    VectorStoreConformance,
    GraphStoreConformance,
    DocStatusConformance,
    LexicalConformance,
    TransactionConformance,
    WriterConformance,
    IdentityConformance,
    ManyWritersConformance,
    KeyClaimsConformance,
    WorkQueueConformance,
    VectorIndexBuildConformance,
):
    """Every conformance test; subclass it and override ``storage``.

    A capability's tests run only on a backend declaring it (see
    :mod:`kgrag.storage.testing.capabilities`).
    """
