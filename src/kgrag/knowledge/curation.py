"""The curation records, where they are stored, and the view the planner reads.

The records are *data* the change computation reads
(:mod:`kgrag.indexing.curated` plans through them); the operations that
write them live in :mod:`kgrag.curation`, which imports indexing, never the
reverse.

Three key-value namespaces, next to the chunk facts (:mod:`kgrag.indexing.facts`):

- ``entity_aliases``: alias name -> ``{"target": name, "merge": merge id}``.
  A name is mapped through its alias chain to its *canonical* name before
  any planning; only canonical names are graph nodes.
- ``entity_merges``: merge id -> ``{"target", "sources", "origin",
  "evidence", "created_at"}``: every merge, with what justified it, until
  it is undone.
- ``entity_splits``: split id -> ``{"name", "parts": {new name: [chunk ids]},
  "created_at"}``: a homonym separated by chunk. The rows of ``name`` in
  a listed chunk (entity rows and relation endpoints) are read as the new
  name, *before* the alias map; other chunks keep ``name``.
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
from typing import TYPE_CHECKING, Any, TypeVar, cast

from kgrag.errors import CurationError
from kgrag.storage.base import edge_key
from kgrag.storage.layout import (
    ALIASES,
    CURATION_VERSION_META,
    EDITS,
    MERGES,
    SPLITS,
    parse_support_key,
    support_key,
)
from kgrag.storage.layout.rows import AliasRow, EditRow, MergeRow, SplitRow
from kgrag.storage.layout.typed import TypedKV, read_meta

if TYPE_CHECKING:
    from kgrag.knowledge.canonical import ChunkFacts
    from kgrag.storage.base import Storage

VERSION_META = CURATION_VERSION_META
MANUAL = "manual_creation"  # source id and file path of manual facts (as LightRAG marks them)
ENTITY_FIELDS = ("description", "entity_type")
RELATION_FIELDS = ("description", "keywords", "weight")

Pair = tuple[str, str]
Key = str | Pair
Row = TypeVar("Row", AliasRow, MergeRow, EditRow, SplitRow)
Fields = dict[str, Any]  # a manual record's field values (EditRow ``create`` / ``set``): JSON


@dataclass
class Curation:
    """All curation records, with the lookups the planner needs.

    Immutable in use: an operation builds a new one (:meth:`replaced`) and
    plans with it before its records are written, in the same transaction.
    """

    aliases: dict[str, AliasRow] = field(default_factory=dict)
    merges: dict[str, MergeRow] = field(default_factory=dict)
    edits: dict[str, EditRow] = field(default_factory=dict)
    splits: dict[str, SplitRow] = field(default_factory=dict)
    canon_map: dict[str, str] = field(init=False, default_factory=dict)
    _members: dict[str, list[str]] = field(init=False, default_factory=dict)
    _split_at: dict[str, dict[str, str]] = field(init=False, default_factory=dict)
    _split_to: dict[str, set[str]] = field(init=False, default_factory=dict)
    _split_from: dict[str, set[str]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        for alias in self.aliases:
            self.canon_map[alias] = _follow(alias, self.aliases)
        groups: dict[str, set[str]] = {}
        for alias, target in self.canon_map.items():
            groups.setdefault(target, set()).add(alias)
        self._members = {t: [t, *sorted(a)] for t, a in groups.items()}
        for rec in self.splits.values():
            for new, chunks in rec["parts"].items():
                for chunk in chunks:
                    self._split_at.setdefault(chunk, {})[rec["name"]] = new
                self._split_to.setdefault(rec["name"], set()).add(new)
                self._split_from.setdefault(new, set()).add(rec["name"])

    def replaced(
        self,
        *,
        aliases: dict[str, AliasRow] | None = None,
        merges: dict[str, MergeRow] | None = None,
        edits: dict[str, EditRow] | None = None,
        splits: dict[str, SplitRow] | None = None,
    ) -> Curation:
        """A copy with some of ``aliases``, ``merges``, ``edits``, ``splits`` replaced."""
        return Curation(
            self.aliases if aliases is None else aliases,
            self.merges if merges is None else merges,
            self.edits if edits is None else edits,
            self.splits if splits is None else splits,
        )

    def __bool__(self) -> bool:
        return bool(self.aliases or self.edits or self.splits)

    # -- splits (per chunk, before the aliases) --------------------------------
    def rename(self, chunk: ChunkFacts) -> ChunkFacts:
        """``chunk`` with its names mapped through its splits, then the aliases."""
        at = self._split_at.get(chunk.chunk_id)
        if not at:
            return chunk.renamed(self.canon_map)
        return chunk.renamed({**self.canon_map, **{n: self.canon(t) for n, t in at.items()}})

    def canon_key(self, key: Key, chunk: str) -> Key | None:
        """The canonical key raw ``key`` has in ``chunk`` (``None``: a self-loop)."""
        at = self._split_at.get(chunk, {})
        if isinstance(key, str):
            return self.canon(at.get(key, key))
        a, b = (self.canon(at.get(n, n)) for n in key)
        return None if a == b else edge_key(a, b)

    def split_of(self, name: str, chunk: str) -> str | None:
        """The new name raw ``name`` has in ``chunk`` by a split, if any."""
        return self._split_at.get(chunk, {}).get(name)

    def canon_names(self, name: str) -> set[str]:
        """Every canonical name raw ``name`` resolves to in some chunk."""
        return {self.canon(name)} | {self.canon(t) for t in self._split_to.get(name, ())}

    def canon_pairs(self, pair: Pair) -> set[Pair]:
        """Every canonical edge key raw ``pair`` resolves to in some chunk."""
        return {
            edge_key(a, b)
            for a in self.canon_names(pair[0])
            for b in self.canon_names(pair[1])
            if a != b
        }

    def support_members(self, name: str) -> list[str]:
        """Raw names whose rows may land on canonical ``name``: its group, and split names."""
        members = self.members(name)
        split = {n for m in members for n in self._split_from.get(m, ())}
        return [*members, *sorted(split - set(members))]

    def support_pairs(self, pair: Pair) -> list[Pair]:
        """Raw edge keys whose rows may land on canonical ``pair``."""
        a, b = (self.support_members(n) for n in pair)
        return sorted({edge_key(x, y) for x in a for y in b if x != y})

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
    def edit(self, key: Key) -> EditRow:
        return self.edits.get(support_key(key), {})

    def deleted(self, key: Key) -> bool:
        """Whether canonical ``key`` has a tombstone."""
        return bool(self.edit(key).get("deleted"))

    def overrides(self, key: Key) -> Fields:
        """Field overrides for canonical ``key``: its own, then its members' (first set wins)."""
        keys: list[Key] = (
            list(self.members(key)) if isinstance(key, str) else list(self.member_pairs(key))
        )
        if isinstance(key, tuple) and key in keys:
            keys.remove(key)
            keys.insert(0, key)
        out: Fields = {}
        for member in keys:
            for name, value in self.edit(member).get("set", {}).items():
                out.setdefault(name, value)
        return out

    def created(self) -> Iterable[tuple[Key, Fields]]:
        """Every manual creation: (raw key, its record), in key order."""
        for text in sorted(self.edits):
            made = self.edits[text].get("create")
            if made is not None:
                yield parse_support_key(text), made

    def curated_names(self) -> set[str]:
        """Every name a record mentions (what a rebuild recomputes after the documents)."""
        names = set(self.aliases) | {a["target"] for a in self.aliases.values()}
        names.update(self._split_to, self._split_from)
        for text in self.edits:
            key = parse_support_key(text)
            names.update((key,) if isinstance(key, str) else key)
        return names


def _follow(name: str, aliases: Mapping[str, AliasRow]) -> str:
    """The end of ``name``'s alias chain (a cycle, refused when merging, stops the walk)."""
    seen = {name}
    while name in aliases:
        name = aliases[name]["target"]
        if name in seen:
            break
        seen.add(name)
    return name


async def _read_all(kv: TypedKV[Row]) -> dict[str, Row]:
    keys = sorted(await kv.keys())
    return {k: v for k, v in zip(keys, await kv.get_many(keys), strict=False) if v is not None}


async def load(storage: Storage) -> Curation:
    """Every stored curation record."""
    return Curation(
        await _read_all(TypedKV(storage.kv(ALIASES), AliasRow)),
        await _read_all(TypedKV(storage.kv(MERGES), MergeRow)),
        await _read_all(TypedKV(storage.kv(EDITS), EditRow)),
        await _read_all(TypedKV(storage.kv(SPLITS), SplitRow)),
    )


async def bump_version(storage: Storage) -> None:
    """Mark the records changed (call inside the transaction that writes them)."""
    await storage.set_meta(VERSION_META, (await read_meta(storage, VERSION_META, int) or 0) + 1)


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


async def export_records(
    storage: Storage, *, timestamps: bool = True
) -> dict[str, list[dict[str, object]]]:
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
        "splits": [
            {"id": sid, **{k: v for k, v in rec.items() if timestamps or k != "created_at"}}
            for sid, rec in sorted(cur.splits.items())
        ],
    }


class SplitNotFoundError(CurationError):
    """A split id that names no recorded split."""


_PARTS = (("aliases", "alias"), ("merges", "id"), ("edits", "key"), ("splits", "id"))


def check_split(cur: Curation, record: Mapping[str, object]) -> None:
    """Refuse a split record the records ``cur`` cannot take (its chunks split already)."""
    name, parts = record.get("name"), record.get("parts")
    if not isinstance(name, str) or not isinstance(parts, Mapping) or not parts:
        raise CurationError("a split needs a name and at least one part")
    seen: set[str] = set()
    for new, chunks in parts.items():
        if not isinstance(chunks, list) or not chunks or new == name:
            raise CurationError(f"split of {name!r}: part {new!r} needs chunks and a new name")
        for chunk in chunks:
            if chunk in seen or cur.split_of(name, chunk) not in (None, new):
                raise CurationError(f"chunk {chunk} of {name!r} is split twice")
            seen.add(chunk)


def _rows(block: Mapping[str, object], part: str, key: str) -> dict[str, dict[str, object]]:
    rows = block.get(part, []) if isinstance(block, Mapping) else None
    if not isinstance(rows, list) or not all(
        isinstance(r, Mapping) and isinstance(r.get(key), str) for r in rows
    ):
        raise CurationError(f"curation block: {part!r} must be a list of objects with {key!r}")
    return {r[key]: {k: v for k, v in r.items() if k != key} for r in rows}


def parse_block(block: Mapping[str, object]) -> Curation:
    """The records of an export's ``curation`` block (a malformed one: :class:`CurationError`)."""
    parts = {part: _rows(block, part, key) for part, key in _PARTS}
    for rec in parts["splits"].values():
        check_split(Curation(), rec)
    # an export's records: their keys are checked, their fields are as kgrag wrote them
    return Curation(
        cast("dict[str, AliasRow]", parts["aliases"]),
        cast("dict[str, MergeRow]", parts["merges"]),
        cast("dict[str, EditRow]", parts["edits"]),
        cast("dict[str, SplitRow]", parts["splits"]),
    )


def _same(a: Mapping[str, object], b: Mapping[str, object]) -> bool:
    """Two records of one key say the same (a merge's time apart)."""
    return {k: v for k, v in a.items() if k != "created_at"} == {
        k: v for k, v in b.items() if k != "created_at"
    }


def _union(part: str, old: Mapping[str, Row], new: Mapping[str, Row]) -> dict[str, Row]:
    clash = sorted(k for k in new.keys() & old.keys() if not _same(old[k], new[k]))
    if clash:
        raise CurationError(f"the {part} of {', '.join(map(repr, clash))} differ here")
    return {**old, **new}


def combined(have: Curation, given: Curation) -> Curation:
    """The union of two record sets; :class:`CurationError` where they contradict.

    A key both hold with different values, or aliases that together form a
    cycle, cannot be settled without a person choosing.
    """
    aliases = _union("aliases", have.aliases, given.aliases)
    merges = _union("merges", have.merges, given.merges)
    edits = _union("edits", have.edits, given.edits)
    splits = _union("splits", have.splits, given.splits)
    for alias in aliases:
        if _follow(alias, aliases) == alias:
            raise CurationError(f"the aliases of {alias!r} would form a cycle")
    out = Curation(aliases, merges, edits, splits)
    for rec in given.splits.values():
        check_split(have, rec)
    return out


async def write_records(storage: Storage, cur: Curation) -> None:
    """Upsert every record of ``cur`` (call inside the caller's transaction)."""
    await TypedKV(storage.kv(ALIASES), AliasRow).upsert(cur.aliases)
    await TypedKV(storage.kv(MERGES), MergeRow).upsert(cur.merges)
    await TypedKV(storage.kv(EDITS), EditRow).upsert(cur.edits)
    await TypedKV(storage.kv(SPLITS), SplitRow).upsert(cur.splits)
    await bump_version(storage)


async def import_records(storage: Storage, block: Mapping[str, object]) -> None:
    """Write the records of an export's ``curation`` block, in one transaction.

    For an index that holds none yet (a fresh copy); indexing afterwards
    plans through them, and :func:`kgrag.indexing.replay.replay_curation` adds
    the manual facts no document touches. ``kgrag import --from kgrag``
    does all of it in one transaction (:mod:`kgrag.maintenance.importing.commit`).
    """
    async with storage.transaction():
        await write_records(storage, parse_block(block))
