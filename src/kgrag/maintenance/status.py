"""The index's status: documents by status, graph size, remembered settings, model costs.

Reads only: it builds no embedder and writes nothing, so ``kgrag status``
works on any index, whatever is configured.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgrag.indexing import manifest, rejected
from kgrag.indexing.facts import PendingSummaries
from kgrag.storage.capabilities import Capability, feature, supports
from kgrag.storage.layout import CHUNKS, EMBEDDING_IDENTITY_META, EXTRACTORS_META, LEDGER_META
from kgrag.types import DocStatus

if TYPE_CHECKING:
    from kgrag.storage.base import Storage
    from kgrag.types import DocRecord


async def index_status(
    storage: Storage, workdir: str | Path, costs: dict[str, dict[str, float]]
) -> dict[str, Any]:
    """The status of the index in ``storage``; ``costs``: what this process's models spent."""
    ds = storage.doc_status
    docs = {s.value: [r.id for r in await ds.by_status(s)] for s in DocStatus}
    processed = await ds.by_status(DocStatus.PROCESSED)
    return {
        "workdir": str(workdir),
        "documents": {k: {"count": len(v), "ids": v} for k, v in docs.items()},
        "failed": [
            {"id": r.id, "file_path": r.file_path, "error": r.error}
            for r in await ds.by_status(DocStatus.FAILED)
        ],
        "warnings": _warnings(processed),
        "disabled": [r.id for r in processed if r.disabled],
        "summaries_pending": await PendingSummaries(storage).count(),
        "rejected_inputs": await rejected.by_path(storage),
        "graph": await _graph(storage, len(docs["processed"])),
        "embedding": await storage.get_meta(EMBEDDING_IDENTITY_META),
        "settings": await manifest.load(storage),
        "llm": costs,
        "llm_all_time": await storage.get_meta(LEDGER_META) or {},
        "storage": await _storage(storage),
    }


async def _storage(storage: Storage) -> dict[str, Any]:
    """The backend, and its work queue where it has one (leases held by workers)."""
    out: dict[str, Any] = {"backend": storage.name}
    if supports(storage, Capability.WORK_QUEUE):
        counts = await feature(storage, Capability.WORK_QUEUE).queue.counts()
        out["queue"] = {
            "pending": counts.pending,
            "leased": counts.leased,
            "expired": counts.expired,
        }
        out["workspace"] = storage.workspace
    return out


def _warnings(processed: list[DocRecord]) -> list[dict[str, Any]]:
    """The processed documents with load or chunk warnings, and those warnings."""
    return [
        {"id": r.id, "file_path": r.file_path, "warnings": [*r.load_warnings, *r.warnings]}
        for r in processed
        if r.warnings or r.load_warnings
    ]


async def _graph(storage: Storage, documents: int) -> dict[str, Any]:
    """The graph's size and the extractors that built it."""
    return {
        "documents": documents,
        "chunks": await storage.kv(CHUNKS).count(),
        "entities": await storage.graph.node_count(),
        "relations": await storage.graph.edge_count(),
        "built_by": await storage.get_meta(EXTRACTORS_META) or [],
    }
