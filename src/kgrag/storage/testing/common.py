"""Shared pieces of the conformance suite: the fixture contract, hypothesis settings, helpers."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from kgrag.storage.base import Storage
from kgrag.types import DocRecord, DocStatus

# Each backend subclass runs the same property test (differing executors);
# the state lives in the ``storage`` fixture, not the class, so that is safe.
PROPERTY = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.differing_executors],
)

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def fresh(prefix: str) -> str:
    """A namespace nobody used before (for property examples)."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, np.float64)
    normed: np.ndarray = rows / np.linalg.norm(rows, axis=-1, keepdims=True)
    return normed


class StorageFixture:
    """Declares the fixture subclasses must provide."""

    @pytest.fixture
    async def storage(self) -> Storage:
        raise NotImplementedError("override the `storage` fixture")


def record(doc_id: str, status: DocStatus, seq: int) -> DocRecord:
    return DocRecord(
        id=doc_id,
        status=status,
        file_path=f"{doc_id}.txt",
        content_length=10,
        content_summary="summary",
        enqueue_seq=seq,
        chunk_ids=["chunk-1"],
    )
