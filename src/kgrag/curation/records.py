"""The curation records, where they are stored, and the view the planner reads.

Three key-value namespaces, next to the chunk facts (:mod:`kgrag.pipeline.facts`):

- ``entity_aliases``: alias name -> ``{"target": name, "merge": merge id}``.
  A name is mapped through its alias chain to its *canonical* name before
  any planning; only canonical names are graph nodes.
- ``entity_merges``: merge id -> ``{"target", "sources", "origin",
  "evidence", "created_at"}``: every merge, with what justified it, until
  it is undone.
- ``manual_edits``: graph key (``e:NAME`` / ``r:A<SEP>B``, as in
  ``graph_support``) -> ``{"create": {...}, "set": {...}, "deleted": true}``:
  manual facts (a source of their own, :data:`MANUAL`), field overrides
  applied after the computed plan, and tombstones.

The ``curation_version`` meta value changes with every write, so a reader
reloads the records only when they changed (:class:`CurationStore`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kgrag.errors import CurationError
from kgrag.pipeline.facts import parse_support_key, support_key
from kgrag.storage.base import edge_key

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

ALIASES = "entity_aliases"
MERGES = "entity_merges"
EDITS = "manual_edits"
VERSION_META = "curation_version"
MANUAL = "manual_creation"  # source id and file path of manual facts (as LightRAG marks them)
ENTITY_FIELDS = ("description", "entity_type")
RELATION_FIELDS = ("description", "keywords", "weight")

Pair = tuple[str, str]
Key = str | Pair


@dataclass
class Curation:
    """All curation records, with the lookups the planner needs.

    Immutable in use: an operation builds a new one (:meth:`replaced`) and
    plans with it before its records are written, in the same transaction.
    """

    aliases: dict[str, dict[str, Any]] = field(default_factory=dict)
    merges: dict[str, dict[str, Any]] = field(default_factory=dict)
    edits: dict[str, dict[str, Any]] = field(default_factory=dict)
    canon_map: dict[str, str] = field(init=False, default_factory=dict)
    _members: dict[str, list[str]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        for alias in self.aliases:
            self.canon_map[alias] = _follow(alias, self.aliases)
        groups: dict[str, set[str]] = {}
        for alias, target in self.canon_map.items():
            groups.setdefault(target, set()).add(alias)
        self._members = {t: [t, *sorted(a)] for t, a in groups.items()}

    def replaced(self, **parts: dict[str, dict[str, Any]]) -> Curation:
        """A copy with some of ``aliases``, ``merges``, ``edits`` replaced."""
        base = {"aliases": self.aliases, "merges": self.merges, "edits": self.edits}
        base.update(parts)
        return Curation(**base)

    def __bool__(self) -> bool:
        return bool(self.aliases or self.edits)

    # -- names ---------------------------------------------------------------
    def canon(self, name: str) -> str:
        """The canonical name ``name`` resolves to (itself unless it is an alias)."""
        return self.canon_map.get(name, name)

    def canon_pair(self, pair: Pair) -> Pair | None:
        """The canonical edge key of a raw pair; ``None`` when it becomes a self-loop."""
        a, b = self.canon(pair[0]), self.canon(pair[1])
        return None if a == b else edge_key(a, b)

    def members(self, name: str) -> list[str]:
        """The raw names resolving to canonical ``name``: itself first, then its aliases."""
        return self._members.get(name, [name])

    def member_pairs(self, pair: Pair) -> list[Pair]:
        """Raw edge keys resolving to canonical ``pair``."""
        a, b = pair
        return sorted({edge_key(x, y) for x in self.members(a) for y in self.members(b) if x != y})

    # -- edits ---------------------------------------------------------------
    def edit(self, key: Key) -> dict[str, Any]:
        return self.edits.get(support_key(key), {})

    def deleted(self, key: Key) -> bool:
        """Whether canonical ``key`` has a tombstone."""
        return bool(self.edit(key).get("deleted"))

    def overrides(self, key: Key) -> dict[str, Any]:
        """Field overrides for canonical ``key``: its own, then its members' (first set wins)."""
        keys: list[Key] = (
            list(self.members(key)) if isinstance(key, str) else list(self.member_pairs(key))
        )
        if isinstance(key, tuple) and key in keys:
            keys.remove(key)
            keys.insert(0, key)
        out: dict[str, Any] = {}
        for member in keys:
            for name, value in self.edit(member).get("set", {}).items():
                out.setdefault(name, value)
        return out

    def created(self) -> Iterable[tuple[Key, dict[str, Any]]]:
        """Every manual creation: (raw key, its record), in key order."""
        for text in sorted(self.edits):
            made = self.edits[text].get("create")
            if made is not None:
                yield parse_support_key(text), made

    def curated_names(self) -> set[str]:
        """Every name a record mentions (what a rebuild recomputes after the documents)."""
        names = set(self.aliases) | {a["target"] for a in self.aliases.values()}
        for text in self.edits:
            key = parse_support_key(text)
            names.update((key,) if isinstance(key, str) else key)
        return names


def _follow(name: str, aliases: Mapping[str, dict[str, Any]]) -> str:
    """The end of ``name``'s alias chain (a cycle, refused when merging, stops the walk)."""
    seen = {name}
    while name in aliases:
        name = aliases[name]["target"]
        if name in seen:
            break
        seen.add(name)
    return name


async def _read_all(storage: Storage, ns: str) -> dict[str, dict[str, Any]]:
    kv = storage.kv(ns)
    keys = sorted(await kv.keys())
    return {k: v for k, v in zip(keys, await kv.get_many(keys), strict=False) if v is not None}


async def load(storage: Storage) -> Curation:
    """Every stored curation record."""
    return Curation(
        await _read_all(storage, ALIASES),
        await _read_all(storage, MERGES),
        await _read_all(storage, EDITS),
    )


async def bump_version(storage: Storage) -> None:
    """Mark the records changed (call inside the transaction that writes them)."""
    await storage.set_meta(VERSION_META, int(await storage.get_meta(VERSION_META) or 0) + 1)


class CurationStore:
    """The current records of one storage, reloaded only after a write (any process)."""

    def __init__(self, storage: Storage):
        self.storage = storage
        self._version: object = None
        self._current = Curation()

    async def current(self) -> Curation:
        version = await self.storage.get_meta(VERSION_META)
        if version is None:
            return Curation()
        if version != self._version:
            self._current, self._version = await load(self.storage), version
        return self._current


async def export_records(storage: Storage, *, timestamps: bool = True) -> dict[str, Any]:
    """The records as the JSON export carries them (``timestamps=False``: no ``created_at``)."""
    cur = await load(storage)
    merges = [
        {"id": mid, **{k: v for k, v in rec.items() if timestamps or k != "created_at"}}
        for mid, rec in sorted(cur.merges.items())
    ]
    return {
        "aliases": [{"alias": a, **rec} for a, rec in sorted(cur.aliases.items())],
        "merges": merges,
        "edits": [{"key": k, **rec} for k, rec in sorted(cur.edits.items())],
    }


def parse_block(block: Mapping[str, Any]) -> Curation:
    """The records of an export's ``curation`` block (a malformed one: :class:`CurationError`)."""
    parts: dict[str, dict[str, dict[str, Any]]] = {}
    for part, key in (("aliases", "alias"), ("merges", "id"), ("edits", "key")):
        rows = block.get(part, []) if isinstance(block, Mapping) else None
        if not isinstance(rows, list) or not all(
            isinstance(r, Mapping) and isinstance(r.get(key), str) for r in rows
        ):
            raise CurationError(f"curation block: {part!r} must be a list of objects with {key!r}")
        parts[part] = {r[key]: {k: v for k, v in r.items() if k != key} for r in rows}
    return Curation(parts["aliases"], parts["merges"], parts["edits"])


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two records of one key say the same (a merge's time apart)."""
    return {k: v for k, v in a.items() if k != "created_at"} == {
        k: v for k, v in b.items() if k != "created_at"
    }


def combined(have: Curation, given: Curation) -> Curation:
    """The union of two record sets; :class:`CurationError` where they contradict.

    A key both hold with different values, or aliases that together form a
    cycle, cannot be settled without a person choosing.
    """
    parts: dict[str, dict[str, dict[str, Any]]] = {}
    for part in ("aliases", "merges", "edits"):
        old, new = getattr(have, part), getattr(given, part)
        clash = sorted(k for k in new.keys() & old.keys() if not _same(old[k], new[k]))
        if clash:
            raise CurationError(f"the {part} of {', '.join(map(repr, clash))} differ here")
        parts[part] = {**old, **new}
    for alias in parts["aliases"]:
        if _follow(alias, parts["aliases"]) == alias:
            raise CurationError(f"the aliases of {alias!r} would form a cycle")
    return Curation(parts["aliases"], parts["merges"], parts["edits"])


async def write_records(storage: Storage, cur: Curation) -> None:
    """Upsert every record of ``cur`` (call inside the caller's transaction)."""
    await storage.kv(ALIASES).upsert(cur.aliases)
    await storage.kv(MERGES).upsert(cur.merges)
    await storage.kv(EDITS).upsert(cur.edits)
    await bump_version(storage)


async def import_records(storage: Storage, block: Mapping[str, Any]) -> None:
    """Write the records of an export's ``curation`` block, in one transaction.

    For an index that holds none yet (a fresh copy); indexing afterwards
    plans through them, and :meth:`kgrag.curation.ops.Curator.replay` adds
    the manual facts no document touches. ``kgrag import --from kgrag``
    does all of it in one transaction (:mod:`kgrag.lifecycle.importing.commit`).
    """
    async with storage.transaction():
        await write_records(storage, parse_block(block))
