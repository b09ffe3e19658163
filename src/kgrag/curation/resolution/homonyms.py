"""One name, two things: names whose fragments fall into clearly separate clusters.

A node's fragments are its rows in ``chunk_facts``. For a node whose
fragments gave it two or more types (each a real share of them), its
chunks are grouped by the type they gave; when two such groups share
neither chunks nor relation partners, the name is reported as a likely
homonym ("Paris" the city and "Paris" the prince). Splitting is a
separate, explicit step.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING

from kgrag.curation.resolution.report import Cluster, Homonym
from kgrag.curation.resolution.view import Entity
from kgrag.storage.layout import FACTS
from kgrag.storage.layout.rows import FactsRow
from kgrag.storage.layout.typed import TypedKV

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

MIN_CHUNKS = 2


def _clusters(name: str, rows: Mapping[str, FactsRow]) -> dict[str, dict[str, set[str]]]:
    """Per type this name was given: its chunks and its relation partners there."""
    out: dict[str, dict[str, set[str]]] = defaultdict(lambda: {"chunks": set(), "hood": set()})
    for cid, rec in rows.items():
        types = {row[1] for row in rec.get("entities", []) if row and row[0] == name}
        partners = {
            r[1] if r[0] == name else r[0]
            for r in rec.get("relations", [])
            if len(r) >= 2 and name in (r[0], r[1])
        }
        for t in types:
            out[t]["chunks"].add(cid)
            out[t]["hood"] |= partners
    return out


def _separate(clusters: dict[str, dict[str, set[str]]]) -> bool:
    big = [c for c in clusters.values() if len(c["chunks"]) >= MIN_CHUNKS]
    return len(big) >= 2 and all(
        not (x["chunks"] & y["chunks"]) and not (x["hood"] & y["hood"])
        for i, x in enumerate(big)
        for y in big[i + 1 :]
    )


async def find_homonyms(storage: Storage, entities: dict[str, Entity]) -> list[Homonym]:
    """The names with two or more separate clusters of fragments."""
    facts = TypedKV(storage.kv(FACTS), FactsRow)
    found: list[Homonym] = []
    for name in sorted(n for n, e in entities.items() if len(e.types) >= 2):
        ids = sorted(entities[name].sources)
        rows = {i: r for i, r in zip(ids, await facts.get_many(ids), strict=True) if r}
        clusters = _clusters(name, rows)
        if _separate(clusters):
            found.append(Homonym(name, _describe(clusters)))
    return found


def _describe(clusters: dict[str, dict[str, set[str]]]) -> list[Cluster]:
    return [
        {"type": t, "chunks": sorted(c["chunks"]), "neighbours": sorted(c["hood"])[:20]}
        for t, c in sorted(clusters.items())
        if len(c["chunks"]) >= MIN_CHUNKS
    ]
