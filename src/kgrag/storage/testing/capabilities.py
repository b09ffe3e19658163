"""Conformance of what every backend declares: its identity members and its capabilities.

A backend declaring a :class:`~kgrag.storage.base.Capability` must pass
that capability's tests (they are skipped for one that does not declare
it) and implement its protocol; for one it does not declare,
:func:`~kgrag.storage.capabilities.feature` must raise
:class:`~kgrag.errors.MissingCapabilityError` naming backend and capability.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from kgrag.errors import MissingCapabilityError
from kgrag.storage.base import Capability, Storage
from kgrag.storage.capabilities import PROTOCOLS, feature, supports
from kgrag.storage.testing.common import StorageFixture, record, unit
from kgrag.types import DocStatus


def _needs(storage: Storage, capability: Capability) -> None:
    if not supports(storage, capability):
        pytest.skip(f"the {storage.name} storage does not declare {capability.value}")


class IdentityConformance(StorageFixture):
    async def test_declared_capabilities_are_implemented(self, storage: Storage) -> None:
        assert isinstance(storage.capabilities, frozenset)
        for capability in Capability:
            if supports(storage, capability):
                assert isinstance(storage, PROTOCOLS[capability]), capability
                assert feature(storage, capability) is storage
                continue
            with pytest.raises(MissingCapabilityError) as caught:
                feature(storage, capability)
            error = caught.value
            assert (error.backend, error.capability) == (storage.name, capability.value)
            assert str(error) == f"the {storage.name} storage has no {capability.what}"

    async def test_label_names_the_store_without_secrets(self, storage: Storage) -> None:
        label = storage.label
        assert isinstance(label, str) and label.strip() == label and label
        assert "password" not in label.lower()
        assert storage.workspace is None or isinstance(storage.workspace, str)

    async def test_an_open_store_exists_and_destroy_empties_it(self, storage: Storage) -> None:
        assert await storage.exists() is True
        await storage.kv("docs").upsert({"k": {"v": 1}})
        await storage.close()
        await storage.destroy()
        await storage.open()
        assert await storage.kv("docs").count() == 0
        assert await storage.exists() is True  # opening created it anew


class ManyWritersConformance(StorageFixture):
    async def test_change_sections_never_overlap(self, storage: Storage) -> None:
        _needs(storage, Capability.MANY_WRITERS)
        inside: list[int] = []

        async def change(n: int) -> None:
            async with feature(storage, Capability.MANY_WRITERS).serial():
                inside.append(n)
                assert len(inside) == 1, "two change sections ran at once"
                await asyncio.sleep(0.02)
                inside.remove(n)

        await asyncio.wait_for(asyncio.gather(*(change(n) for n in range(3))), 10)

    async def test_a_shared_holder_keeps_an_exclusive_writer_out(self, storage: Storage) -> None:
        _needs(storage, Capability.MANY_WRITERS)
        entered, leave = asyncio.Event(), asyncio.Event()

        async def worker() -> None:
            async with storage.writer(shared=True):
                entered.set()
                await leave.wait()

        task = asyncio.create_task(worker())
        await asyncio.wait_for(entered.wait(), 10)
        waiter = asyncio.create_task(_enter(storage))
        await asyncio.sleep(0.1)
        assert not waiter.done()  # the exclusive writer waits for the shared one
        leave.set()
        await asyncio.wait_for(task, 10)
        assert await asyncio.wait_for(waiter, 10) is True


class KeyClaimsConformance(StorageFixture):
    async def test_claims_are_disjoint_and_released(self, storage: Storage) -> None:
        _needs(storage, Capability.KEY_CLAIMS)
        claims = feature(storage, Capability.KEY_CLAIMS)
        keys = [f"n:{i:03d}" for i in range(6)]
        async with claims.claim_keys(keys, 4) as first:
            assert first == keys[:4]
            async with claims.claim_keys(keys, 4) as second:
                assert second == keys[4:]  # held ones are skipped, not waited for
        with pytest.raises(RuntimeError):
            async with claims.claim_keys(keys, 1) as mine:
                assert mine == keys[:1]
                raise RuntimeError("boom")
        async with claims.claim_keys(keys, 10) as again:
            assert again == keys  # every claim was released, a failed block's too


class WorkQueueConformance(StorageFixture):
    async def test_a_claimed_document_is_leased_once_and_given_back(self, storage: Storage) -> None:
        _needs(storage, Capability.WORK_QUEUE)
        queue = feature(storage, Capability.WORK_QUEUE).queue
        await storage.doc_status.upsert([record("d1", DocStatus.PENDING, 1)])
        assert (await queue.counts()).pending == 1
        claimed = await queue.claim("w1", 5, 60.0)
        assert [(r.id, n) for r, n in claimed] == [("d1", 1)]
        assert await queue.claim("w2", 5, 60.0) == []  # leased: nobody else gets it
        counts = await queue.counts()
        assert (counts.pending, counts.leased, counts.expired) == (0, 1, 0)
        assert await queue.renew("w1", ["d1"], 60.0) == {"d1"}
        assert await queue.renew("w2", ["d1"], 60.0) == set()
        assert await queue.release_all("w1") == 1
        again = await queue.claim("w2", 5, 60.0)
        assert [(r.id, n) for r, n in again] == [("d1", 2)]  # the attempt is counted
        done = record("d1", DocStatus.PROCESSED, 1)
        assert await queue.settle("w1", done, None) is False  # not w1's lease any more
        assert await queue.settle("w2", done, None) is True
        stored = await storage.doc_status.get("d1")
        assert stored is not None and stored.status is DocStatus.PROCESSED


class VectorIndexBuildConformance(StorageFixture):
    async def test_building_vector_indexes_is_repeatable(self, storage: Storage) -> None:
        _needs(storage, Capability.VECTOR_INDEX_BUILD)
        builder = feature(storage, Capability.VECTOR_INDEX_BUILD)
        rows = unit(np.arange(1, 13, dtype=np.float64).reshape(3, 4))
        await storage.vectors("chunks").upsert(["a", "b", "c"], rows, [{}, {}, {}])
        first = await builder.build_vector_indexes()
        assert all(isinstance(name, str) for name in first)
        assert await builder.build_vector_indexes() == []  # nothing missing any more


async def _enter(storage: Storage) -> bool:
    async with storage.writer():
        return True
