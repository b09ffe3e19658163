"""The curation operations: merge, unmerge, and manual edits of entities and relations.

Each operation validates the request against the graph and the records,
builds the new records, and applies one :class:`~kgrag.indexing.changes.Change`
that recomputes the touched keys *with* the new records and writes the
records in the same transaction (a crash leaves the old state or the new
one). The caller holds the writer lease.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, cast

from kgrag.errors import CurationError, EntityNotFoundError, MergeNotFoundError
from kgrag.indexing.changes import Change, ChangeApplier, ChangeStats
from kgrag.indexing.replay import replay_curation
from kgrag.knowledge.curation import (
    ENTITY_FIELDS,
    RELATION_FIELDS,
    Curation,
    SplitNotFoundError,
    bump_version,
    check_split,
)
from kgrag.storage.base import edge_key
from kgrag.storage.layout import ALIASES, EDITS, MERGES, SPLITS, SUPPORT, support_key
from kgrag.storage.layout.rows import AliasRow, EditRow, MergeRow, SplitRow, SupportRow
from kgrag.storage.layout.typed import TypedKV

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

Pair = tuple[str, str]
Key = str | Pair
Write = Callable[[], Awaitable[None]]


def split_id(name: str, parts: Mapping[str, list[str]]) -> str:
    """A split's id: a digest of what it separates (the same split gets the same id anywhere)."""
    text = json.dumps([name, sorted(parts.items())], ensure_ascii=False)
    return "s-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def merge_id(target: str, sources: list[str]) -> str:
    """A merge's id: a digest of what it merges (the same merge gets the same id anywhere)."""
    text = json.dumps([target, sorted(sources)], ensure_ascii=False)
    return "m-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


class Curator:
    """Curation operations on one index (see the module docstring)."""

    def __init__(self, storage: Storage, applier: ChangeApplier):
        self.storage, self.applier = storage, applier

    async def _current(self) -> Curation:
        return await self.applier.curation.current()

    async def _apply(self, cur: Curation, seeds: Iterable[str], write: Write) -> ChangeStats:
        async def commit() -> None:
            await write()
            await bump_version(self.storage)

        change = Change(recompute=sorted(set(seeds)), curation=cur, commit=commit)
        stats = await self.applier.apply(change)
        await self.applier.finish()
        return stats

    # -- lookups -------------------------------------------------------------
    async def _is_node(self, name: str) -> bool:
        return await self.storage.graph.get_node(name) is not None

    async def _known(self, name: str) -> bool:
        """A graph node, or a name some live chunk mentions."""
        if await self._is_node(name):
            return True
        return await self.storage.kv(SUPPORT).get(support_key(name)) is not None

    async def _node(self, cur: Curation, name: str) -> str:
        """The canonical name of ``name``, which must be a graph node."""
        canon = cur.canon(name)
        if not await self._is_node(canon):
            raise EntityNotFoundError(f"no entity named {name!r} in the graph")
        return canon

    async def _edge(self, cur: Curation, src: str, tgt: str) -> Pair:
        a, b = await self._node(cur, src), await self._node(cur, tgt)
        pair = edge_key(a, b)
        if await self.storage.graph.get_edge(*pair) is None:
            raise EntityNotFoundError(f"no relation between {a!r} and {b!r} in the graph")
        return pair

    # -- merges --------------------------------------------------------------
    async def merge(
        self,
        target: str,
        sources: Iterable[str],
        *,
        evidence: Mapping[str, object] | None = None,
        origin: str = "manual",
        new_target: bool = False,
    ) -> str:
        """Merge ``sources`` into ``target``; returns the merge id.

        ``new_target``: the target need not exist (a rename); otherwise it
        and every source must be a graph node or a name a live chunk mentions.
        """
        group = [(target, list(sources))]
        ids = await self.merge_groups(group, [evidence], origin=origin, new_target=new_target)
        return ids[0]

    async def merge_groups(
        self,
        groups: list[tuple[str, list[str]]],
        evidence: Sequence[Mapping[str, object] | None] | None = None,
        *,
        origin: str = "dedupe",
        new_target: bool = False,
    ) -> list[str]:
        """Merge every group in one change; returns the merge ids, in the groups' order.

        The groups are checked in order against the records the earlier ones
        make (as merging them one by one would), then recorded and
        recomputed in one transaction: the same graph, one recompute.
        """
        if evidence is not None and len(evidence) != len(groups):
            raise CurationError(f"{len(evidence)} evidence entries for {len(groups)} groups")
        cur = await self._current()
        ids: list[str] = []
        seeds: list[str] = []
        records: dict[str, MergeRow] = {}
        aliases: dict[str, AliasRow] = {}
        for (target, sources), proof in zip(groups, evidence or [None] * len(groups), strict=True):
            mid, record = await self._group(cur, target, sources, proof, origin, new_target)
            made: dict[str, AliasRow] = {
                s: {"target": record["target"], "merge": mid} for s in record["sources"]
            }
            cur = cur.replaced(aliases={**cur.aliases, **made}, merges={**cur.merges, mid: record})
            records[mid], ids = record, [*ids, mid]
            aliases.update(made)
            seeds += [record["target"], *record["sources"]]

        async def write() -> None:
            await TypedKV(self.storage.kv(MERGES), MergeRow).upsert(records)
            await TypedKV(self.storage.kv(ALIASES), AliasRow).upsert(aliases)

        if ids:
            await self._apply(cur, seeds, write)
        return ids

    async def _group(
        self,
        cur: Curation,
        target: str,
        sources: Iterable[str],
        evidence: Mapping[str, object] | None,
        origin: str,
        new_target: bool,
    ) -> tuple[str, MergeRow]:
        """One group's merge id and record, checked against ``cur``."""
        into = cur.canon(target)
        if not new_target and not await self._known(into):
            raise EntityNotFoundError(f"no entity named {target!r} to merge into")
        names = await self._sources(cur, into, sources)
        return _merge_record(into, names, evidence, origin)

    async def _sources(self, cur: Curation, into: str, sources: Iterable[str]) -> list[str]:
        names: list[str] = []
        for name in sorted(set(sources)):
            if name == into:
                continue
            if name in cur.aliases:
                rec = cur.aliases[name]
                raise CurationError(
                    f"{name!r} is already merged into {cur.canon(name)!r} "
                    f"(merge {rec['merge']}); unmerge it first"
                )
            if not await self._known(name):
                raise EntityNotFoundError(f"no entity named {name!r} to merge")
            names.append(name)
        if not names:
            raise CurationError(f"nothing to merge into {into!r}: give other entities")
        return names

    async def unmerge(self, mid: str) -> None:
        """Undo merge ``mid``: its sources are their own entities again."""
        cur = await self._current()
        record = cur.merges.get(mid)
        if record is None:
            raise MergeNotFoundError(f"no merge {mid!r} (see `kgrag merges`)")
        gone = [a for a, rec in cur.aliases.items() if rec.get("merge") == mid]
        aliases = {a: rec for a, rec in cur.aliases.items() if a not in gone}
        merges = {m: rec for m, rec in cur.merges.items() if m != mid}

        async def write() -> None:
            await self.storage.kv(ALIASES).delete(gone)
            await self.storage.kv(MERGES).delete([mid])

        new = cur.replaced(aliases=aliases, merges=merges)
        await self._apply(new, [record["target"], *record["sources"], *gone], write)

    async def merges(self) -> list[dict[str, object]]:
        """Every recorded merge, oldest first: id, target, sources, origin, evidence, created_at."""
        cur = await self._current()
        return [{"id": mid, **rec} for mid, rec in _oldest_first(cur.merges)]

    async def rename(self, old: str, new: str) -> str:
        """Rename entity ``old`` to ``new`` (a merge into a new name); returns the merge id."""
        cur = await self._current()
        name = await self._node(cur, old)
        if await self._known(new) or new in cur.aliases:
            raise CurationError(f"{new!r} already exists; merge into it instead")
        return await self.merge(new, [name], origin="rename", new_target=True)

    # -- splits --------------------------------------------------------------
    async def split(self, name: str, parts: Mapping[str, Iterable[str]]) -> str:
        """Separate homonym ``name``: each new name takes its rows in the chunks listed for it.

        Returns the split id (undo: :meth:`unsplit`). Chunks not listed keep ``name``.
        """
        cur = await self._current()
        if name in cur.aliases:
            raise CurationError(f"{name!r} is merged into {cur.canon(name)!r}; unmerge it first")
        row = await TypedKV(self.storage.kv(SUPPORT), SupportRow).get(support_key(name))
        mentions = set(row.get("chunks", []) if row else [])
        if not mentions:
            raise EntityNotFoundError(f"no live chunk names {name!r}")
        plain = {new: sorted(set(chunks)) for new, chunks in parts.items()}
        for new, chunks in plain.items():
            await self._fresh(cur, new)
            if missing := sorted(set(chunks) - mentions):
                raise CurationError(f"chunk(s) {', '.join(missing)} do not name {name!r}")
        record: SplitRow = {"name": name, "parts": plain, "created_at": time.time()}
        check_split(cur, record)
        sid = split_id(name, plain)
        if sid in cur.splits:
            raise CurationError(f"{name!r} is split so already (split {sid})")

        async def write() -> None:
            await TypedKV(self.storage.kv(SPLITS), SplitRow).upsert({sid: record})

        after = cur.replaced(splits={**cur.splits, sid: record})
        await self._apply(after, [name, *plain], write)
        return sid

    async def _fresh(self, cur: Curation, new: str) -> None:
        """Refuse a split's new name that names something already."""
        if not new.strip():
            raise CurationError("a split part needs a name")
        if new in cur.aliases or await self._known(new) or cur.support_members(new) != [new]:
            raise CurationError(f"{new!r} already exists; split into new names only")

    async def unsplit(self, sid: str) -> None:
        """Undo split ``sid``: its chunks' rows are the split name's again."""
        cur = await self._current()
        record = cur.splits.get(sid)
        if record is None:
            raise SplitNotFoundError(f"no split {sid!r} (see `kgrag splits`)")

        async def write() -> None:
            await self.storage.kv(SPLITS).delete([sid])

        new = cur.replaced(splits={k: v for k, v in cur.splits.items() if k != sid})
        await self._apply(new, [record["name"], *record["parts"]], write)

    async def splits(self) -> list[dict[str, object]]:
        """Every recorded split, oldest first: id, name, parts, created_at."""
        return [{"id": sid, **rec} for sid, rec in _oldest_first((await self._current()).splits)]

    # -- edits ---------------------------------------------------------------
    async def _edit(self, cur: Curation, key: Key, record: EditRow, seeds: list[str]) -> None:
        text = support_key(key)
        edits = {**cur.edits, text: record} if record else dict(cur.edits)
        if not record:
            edits.pop(text, None)

        async def write() -> None:
            kv = TypedKV(self.storage.kv(EDITS), EditRow)
            await (kv.upsert({text: record}) if record else kv.delete([text]))

        await self._apply(cur.replaced(edits=edits), seeds, write)

    async def create_entity(self, name: str, entity_type: str, description: str) -> None:
        """A manual entity: it exists with no document (its source is ``manual_creation``)."""
        cur = await self._current()
        if not name.strip():
            raise CurationError("an entity needs a name")
        if name in cur.aliases or await self._is_node(cur.canon(name)):
            raise CurationError(f"entity {name!r} already exists; edit it instead")
        if cur.deleted(name):
            raise CurationError(f"entity {name!r} is deleted; restore it instead")
        record: EditRow = {
            **cur.edit(name),
            "create": {"entity_type": entity_type, "description": description},
        }
        await self._edit(cur, name, record, [name])

    async def edit_entity(self, name: str, fields: Mapping[str, object]) -> None:
        """Override fields (``description``, ``entity_type``); a ``None`` value drops an override."""
        cur = await self._current()
        key = await self._node(cur, name)
        await self._edit(cur, key, _set(cur.edit(key), fields, ENTITY_FIELDS), [key])

    async def delete_entity(self, name: str) -> None:
        """Delete an entity and its relations; it stays deleted until restored."""
        cur = await self._current()
        key = await self._node(cur, name)
        await self._edit(cur, key, {**cur.edit(key), "deleted": True}, [key])

    async def restore_entity(self, name: str) -> None:
        """Undo :meth:`delete_entity`."""
        cur = await self._current()
        if not cur.deleted(name):
            raise EntityNotFoundError(f"no deleted entity named {name!r}")
        await self._edit(cur, name, _without(cur.edit(name), "deleted"), [name])

    async def create_relation(
        self, src: str, tgt: str, *, description: str = "", keywords: str = "", weight: float = 1.0
    ) -> None:
        """A manual relation between two existing entities."""
        cur = await self._current()
        a, b = await self._node(cur, src), await self._node(cur, tgt)
        if a == b:
            raise CurationError("a relation needs two different entities")
        pair = edge_key(a, b)
        if await self.storage.graph.get_edge(*pair) is not None or cur.deleted(pair):
            raise CurationError(f"a relation between {a!r} and {b!r} exists; edit it instead")
        made: dict[str, object] = {"src": a, "tgt": b, "description": description}
        made["keywords"] = keywords
        made["weight"] = float(weight)
        await self._edit(cur, pair, {**cur.edit(pair), "create": made}, [a, b])

    async def edit_relation(self, src: str, tgt: str, fields: Mapping[str, object]) -> None:
        """Override ``description``, ``keywords`` or ``weight``; ``None`` drops an override."""
        cur = await self._current()
        pair = await self._edge(cur, src, tgt)
        await self._edit(cur, pair, _set(cur.edit(pair), fields, RELATION_FIELDS), list(pair))

    async def delete_relation(self, src: str, tgt: str) -> None:
        cur = await self._current()
        pair = await self._edge(cur, src, tgt)
        await self._edit(cur, pair, {**cur.edit(pair), "deleted": True}, list(pair))

    async def restore_relation(self, src: str, tgt: str) -> None:
        cur = await self._current()
        pair = edge_key(cur.canon(src), cur.canon(tgt))
        if not cur.deleted(pair):
            raise EntityNotFoundError(f"no deleted relation between {src!r} and {tgt!r}")
        await self._edit(cur, pair, _without(cur.edit(pair), "deleted"), list(pair))

    async def replay(self) -> int:
        """Recompute every key a record mentions (after a rebuild); returns the names seeded."""
        return await replay_curation(self.applier)


def _merge_record(
    target: str, sources: list[str], evidence: Mapping[str, object] | None, origin: str
) -> tuple[str, MergeRow]:
    """A merge's id and record."""
    record: MergeRow = {
        "target": target,
        "sources": sources,
        "origin": origin,
        "evidence": _plain(evidence or {}),
        "created_at": time.time(),
    }
    return merge_id(target, sources), record


def _oldest_first(
    records: Mapping[str, MergeRow | SplitRow],
) -> list[tuple[str, MergeRow | SplitRow]]:
    """``records`` by creation time, then id (a record without a time first)."""
    return sorted(records.items(), key=lambda kv: (kv[1].get("created_at", 0), kv[0]))


def _without(record: EditRow, field: str) -> EditRow:
    """``record`` less one field (an edit record's fields are all optional)."""
    return cast("EditRow", {k: v for k, v in record.items() if k != field})


def _set(record: EditRow, fields: Mapping[str, object], allowed: tuple[str, ...]) -> EditRow:
    """``record`` with its ``set`` overrides updated from ``fields``."""
    unknown = sorted(set(fields) - set(allowed))
    if unknown:
        raise CurationError(f"cannot edit {', '.join(unknown)}; editable: {', '.join(allowed)}")
    overrides = dict(record.get("set", {}))
    for name, value in fields.items():
        if value is None:
            overrides.pop(name, None)
        else:
            overrides[name] = _number(value) if name == "weight" else str(value)
    out = _without(record, "set")
    if overrides:
        out["set"] = overrides
    return out


def _number(value: object) -> float:
    """A weight given as a number or its text."""
    return float(value) if isinstance(value, (int, float)) else float(str(value))


def _plain(evidence: Mapping[str, object]) -> dict[str, object]:
    """The evidence as plain JSON data (refused when it is not serialisable)."""
    try:
        plain: dict[str, object] = json.loads(json.dumps(evidence, ensure_ascii=False))
    except (TypeError, ValueError) as exc:
        raise CurationError(f"merge evidence must be JSON data: {exc}") from exc
    return plain
