"""Typed access to the optional features a storage backend declares.

A backend lists what it offers in ``storage.capabilities`` (a frozenset of
:class:`~kgrag.storage.base.Capability`); each capability has a protocol
here naming the members it adds to :class:`~kgrag.storage.base.Storage`.
Callers ask, never probe::

    if supports(storage, Capability.KEY_CLAIMS):
        async with feature(storage, Capability.KEY_CLAIMS).claim_keys(keys, 8) as mine:
            ...
    queue = feature(storage, Capability.WORK_QUEUE).queue  # or MissingCapabilityError

:func:`feature` returns the same object, typed as the capability's protocol,
once the backend has declared it; otherwise it raises
:class:`~kgrag.errors.MissingCapabilityError` naming the backend and the
capability. The conformance suite (:mod:`kgrag.storage.testing`) checks
that a backend implements what it declares.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Literal, Protocol, overload, runtime_checkable

from kgrag.errors import MissingCapabilityError
from kgrag.storage.base import Capability, Storage, WorkQueue

__all__ = [
    "Capability",
    "KeyClaiming",
    "ManyWriters",
    "Queued",
    "VectorIndexBuilding",
    "feature",
    "supports",
]


@runtime_checkable
class ManyWriters(Storage, Protocol):
    """:attr:`Capability.MANY_WRITERS`: the members are ``Storage``'s own, with stronger promises.

    ``writer(shared=True)`` lets other shared holders (workers in other
    processes) in and keeps exclusive ones out; ``serial()`` is one at a
    time across every process.
    """


@runtime_checkable
class Queued(Storage, Protocol):
    """:attr:`Capability.WORK_QUEUE`: leases on queued documents for worker processes."""

    @property
    def queue(self) -> WorkQueue: ...


@runtime_checkable
class KeyClaiming(Storage, Protocol):
    """:attr:`Capability.KEY_CLAIMS`: claims on single keys, taken without waiting."""

    def claim_keys(self, keys: list[str], limit: int) -> AbstractAsyncContextManager[list[str]]:
        """Up to ``limit`` of ``keys`` (in order) that no other holder has, for the block."""


@runtime_checkable
class VectorIndexBuilding(Storage, Protocol):
    """:attr:`Capability.VECTOR_INDEX_BUILD`: vector indexes a bulk load left for later."""

    async def build_vector_indexes(self) -> list[str]:
        """Build every missing vector index; the names of those built."""


PROTOCOLS: dict[Capability, type[object]] = {
    Capability.MANY_WRITERS: ManyWriters,
    Capability.WORK_QUEUE: Queued,
    Capability.KEY_CLAIMS: KeyClaiming,
    Capability.VECTOR_INDEX_BUILD: VectorIndexBuilding,
}
"""Each capability's protocol: what a backend declaring it implements."""


def supports(storage: Storage, capability: Capability) -> bool:
    """Whether ``storage`` declares ``capability``."""
    return capability in storage.capabilities


@overload
def feature(
    storage: Storage, capability: Literal[Capability.MANY_WRITERS], hint: str = ""
) -> ManyWriters: ...
@overload
def feature(
    storage: Storage, capability: Literal[Capability.WORK_QUEUE], hint: str = ""
) -> Queued: ...
@overload
def feature(
    storage: Storage, capability: Literal[Capability.KEY_CLAIMS], hint: str = ""
) -> KeyClaiming: ...
@overload
def feature(
    storage: Storage, capability: Literal[Capability.VECTOR_INDEX_BUILD], hint: str = ""
) -> VectorIndexBuilding: ...
@overload
def feature(storage: Storage, capability: Capability, hint: str = "") -> Storage: ...
def feature(storage: Storage, capability: Capability, hint: str = "") -> Storage:
    """``storage`` typed as ``capability``'s protocol, or :class:`MissingCapabilityError`.

    ``hint`` ends the error's message (what to do instead).
    """
    if not supports(storage, capability):
        raise MissingCapabilityError(storage.name, capability.value, capability.what, hint)
    return storage
