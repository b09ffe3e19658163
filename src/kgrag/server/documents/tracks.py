"""Track ids: the documents one upload, insert or scan asked for, and why some were refused.

A :class:`Track` is made when the request arrives (uploads and texts know
their document ids at once; a scan fills them in as it loads the folder)
and saved in the index's ``server_tracks`` key-value namespace when its
job ends, so ``GET /documents/track_status/{id}`` answers after a restart
too.
"""

from __future__ import annotations

import copy
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kgrag.storage.layout import SERVER_TRACKS
from kgrag.storage.layout.rows import TrackRow
from kgrag.storage.layout.typed import TypedKV

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

NAMESPACE = SERVER_TRACKS


def new_track_id(prefix: str) -> str:
    """A track id in LightRAG's form: ``upload_20250729_170612_1a2b3c4d``."""
    return f"{prefix}_{time.strftime('%Y%m%d_%H%M%S')}_{secrets.token_hex(4)}"


@dataclass(slots=True)
class Planned:
    """One document a track asked for."""

    doc_id: str
    file_path: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Track:
    """The documents of one request and, per document id, why it was refused (if it was)."""

    track_id: str
    docs: list[Planned] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    created_at: float = field(default_factory=time.time)
    job_id: str | None = None

    def plan(self, doc_id: str, file_path: str, metadata: dict[str, Any] | None = None) -> None:
        if all(p.doc_id != doc_id for p in self.docs):
            self.docs.append(Planned(doc_id, file_path, dict(metadata or {})))

    def refuse(self, doc_id: str, file_path: str, reason: str) -> None:
        self.plan(doc_id, file_path)
        self.errors[doc_id] = reason

    def to_dict(self) -> TrackRow:
        return {
            "track_id": self.track_id,
            "docs": [
                {
                    "doc_id": p.doc_id,
                    "file_path": p.file_path,
                    "metadata": copy.deepcopy(p.metadata),
                }
                for p in self.docs
            ],
            "errors": dict(self.errors),
            "created_at": self.created_at,
            "job_id": self.job_id,
        }

    @classmethod
    def from_dict(cls, data: TrackRow) -> Track:
        docs = [Planned(**p) for p in data.get("docs", [])]
        return cls(
            str(data["track_id"]),
            docs,
            dict(data.get("errors", {})),
            float(data.get("created_at", 0.0)),
            data.get("job_id"),
        )


def _rows(storage: Storage) -> TypedKV[TrackRow]:
    return TypedKV(storage.kv(NAMESPACE), TrackRow)


async def save(storage: Storage, track: Track) -> None:
    await _rows(storage).upsert({track.track_id: track.to_dict()})


async def load(storage: Storage, track_id: str) -> Track | None:
    data = await _rows(storage).get(track_id)
    return Track.from_dict(data) if data else None
