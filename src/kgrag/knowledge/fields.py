"""Field-level merge rules shared by nodes and edges.

Small pure helpers: capped ordered lists (KEEP / FIFO), description
fragments, keyword unions and majority entity types. Everything here is
deterministic: the same inputs always give the same outputs, in the same
order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

from kgrag.types import SEP

UNKNOWN = "UNKNOWN"


class Fragment(Protocol):
    """What entity and relation fragments have in common."""

    description: str
    chunk_id: str
    file_path: str


F = TypeVar("F", bound=Fragment)


def as_list(value: object) -> list[str]:
    """A stored list field as a list; tolerates ``SEP``-joined strings."""
    if not value:
        return []
    if isinstance(value, str):
        return [v for v in value.split(SEP) if v]
    return [str(v) for v in value] if isinstance(value, Iterable) else []


def cap(items: list[str], limit: int, keep: bool) -> list[str]:
    """At most ``limit`` items: the first ones (KEEP) or the last (FIFO)."""
    if limit <= 0:
        return []
    if len(items) <= limit:
        return items
    return items[:limit] if keep else items[len(items) - limit :]


def dedup(items: Iterable[str]) -> list[str]:
    """Stripped, non-empty, distinct items in first-seen order."""
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        item = item.strip()
        if item and item not in seen:
            seen.add(item)
            out.append(item)
    return out


def admit_sources(
    existing_ids: list[str], fragments: Sequence[F], limit: int, keep: bool
) -> tuple[list[str], list[F]]:
    """Merge the fragments' chunk ids into ``existing_ids`` under the cap.

    Returns the capped id list and the fragments that count. With KEEP,
    once the cap is reached a fragment from a chunk not yet listed is
    skipped altogether (its description, type, weight and keywords too);
    with FIFO every fragment counts and the newest ids are kept.
    """
    ids = dedup(existing_ids)
    seen = set(ids)
    admitted: list[F] = []
    for frag in fragments:
        cid = frag.chunk_id.strip()
        if cid and cid not in seen:
            if keep and len(ids) >= limit:
                continue
            ids.append(cid)
            seen.add(cid)
        admitted.append(frag)
    return cap(ids, limit, keep), admitted


def merge_file_paths(
    existing: list[str], fragments: Sequence[Fragment], limit: int, keep: bool
) -> list[str]:
    """Distinct file paths, existing first, capped like source ids."""
    merged = dedup([*existing, *(f.file_path for f in fragments)])
    return cap(merged, limit, keep)


def description_fragments(existing: str | None, new: Iterable[str]) -> list[str]:
    """Existing fragments (split on ``SEP``) then new ones, exact-deduplicated."""
    old = existing.split(SEP) if existing else []
    return dedup([*old, *new])


def split_keywords(text: str) -> list[str]:
    """Keywords of a comma-separated string (ASCII or full-width commas)."""
    return dedup(text.replace("\uff0c", ",").replace("\u3001", ",").split(","))


def merge_keywords(texts: Iterable[str]) -> str:
    """The sorted union of the keywords of ``texts``, joined with ``", "``."""
    words: set[str] = set()
    for text in texts:
        words.update(split_keywords(text or ""))
    return ", ".join(sorted(words))


def count_types(counts: dict[str, int], types: Iterable[str]) -> dict[str, int]:
    """``counts`` plus one per non-empty type, keys sorted."""
    out = dict(counts)
    for t in types:
        t = t.strip()
        if t:
            out[t] = out.get(t, 0) + 1
    return dict(sorted(out.items()))


def majority_type(counts: dict[str, int]) -> str:
    """The most frequent type; ties go to the alphabetically first.

    ``UNKNOWN`` (placeholder endpoints) only wins when no other type has
    been seen, so a real extraction always replaces a placeholder's type.
    """
    known = {t: n for t, n in counts.items() if n > 0 and t.upper() != UNKNOWN}
    pool = known or {t: n for t, n in counts.items() if n > 0}
    if not pool:
        return UNKNOWN
    return min(pool, key=lambda t: (-pool[t], t))


def seed_type_counts(existing: Mapping[str, object]) -> dict[str, int]:
    """The stored ``type_counts``, or one vote for the stored type."""
    counts = existing.get("type_counts")
    if isinstance(counts, dict):
        return {str(t): int(n) for t, n in counts.items()}
    t = str(existing.get("entity_type") or "").strip()
    return {t: 1} if t else {}


def merge_directions(existing: object, pairs: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Distinct ``[source, target]`` orders, first-seen order (``existing``: the stored ones)."""
    out: list[list[str]] = []
    stored: list[Sequence[object]] = list(existing) if isinstance(existing, (list, tuple)) else []
    for pair in [*stored, *pairs]:
        item = [str(pair[0]), str(pair[1])]
        if item not in out:
            out.append(item)
    return out
