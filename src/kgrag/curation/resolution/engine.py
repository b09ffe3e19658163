"""Entity resolution over a graph view: block, read the text, score, judge, group.

:func:`resolve_view` is pure logic over a :class:`~kgrag.curation.resolution.view.GraphView`
(the evaluation runs it on labelled fixtures); :func:`resolve_entities`
loads the view from a store and adds the homonym report. Nothing is
written here: applying the groups is :mod:`kgrag.curation.resolution.apply`.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kgrag.curation.resolution import blocking
from kgrag.curation.resolution.group import Group, group_pairs
from kgrag.curation.resolution.homonyms import find_homonyms
from kgrag.curation.resolution.judge import judge
from kgrag.curation.resolution.names import Name, parse
from kgrag.curation.resolution.report import ResolutionReport
from kgrag.curation.resolution.score import PairScore, score_pair
from kgrag.curation.resolution.shared_names import People
from kgrag.curation.resolution.statements import Together, stated_aliases, together
from kgrag.curation.resolution.vetoes import types_of, veto
from kgrag.curation.resolution.view import Entity, GraphView, load_view

if TYPE_CHECKING:
    from kgrag.config.settings import Settings
    from kgrag.llm.service import ChatService
    from kgrag.storage.base import Storage

Pair = tuple[str, str]
SHARED_CHUNKS = 4  # shared chunks read per pair for the sentence check
BATCH = 512
RIVALLED = frozenset({"containment", "acronym"})


@dataclass(slots=True)
class Options:
    min_score: float = 0.6
    vector_top_k: int = 5
    vector_min_sim: float = 0.92
    near_misses: int = 20
    judge_band: float = 0.25  # pairs this far below the threshold (or 0.15 above) are judged

    @classmethod
    def from_settings(cls, settings: Settings, min_score: float | None = None) -> Options:
        return cls(
            settings.resolution.min_score if min_score is None else min_score,
            settings.resolution.vector_top_k,
            settings.resolution.vector_min_sim,
        )


async def _read(view: GraphView, ids: set[str]) -> dict[str, str]:
    wanted, out = sorted(ids), {}
    for i in range(0, len(wanted), BATCH):
        out.update(await view.texts(wanted[i : i + BATCH]))
    return out


async def _statements(view: GraphView, out: blocking.Candidates) -> None:
    """Pairs the text states as aliases (courtesy names), both of them nodes."""
    ids = {c for e in view.entities.values() if _has_cjk(e.name) for c in e.sources}
    for text in (await _read(view, ids)).values():
        for name, alias, _ in stated_aliases(text):
            if name in view.entities and alias in view.entities and name != alias:
                out.setdefault(blocking.pair(name, alias), set()).add("statement")


def _has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def _rivals(
    view: GraphView, cands: blocking.Candidates, names: dict[str, Name]
) -> Counter[tuple[str, str]]:
    """How many longer names each short name is contained in *and* mentioned with,
    or (an acronym) spells out.

    A surname met beside several full names ("Williams" with Hank and
    Audrey Williams), an acronym of several names (BC: Baltimore Colts,
    Blinn College) stands for none of them in particular.
    """
    seen: Counter[tuple[str, str]] = Counter()
    for (a, b), routes in cands.items():
        short, long = sorted((a, b), key=lambda n: len(names[n].key))
        if routes == {"acronym"}:
            seen[short, "acronym"] += 1
        elif routes == {"containment"}:
            seen[short, "anywhere"] += 1
            if view.entities[short].sources & view.entities[long].sources:
                seen[short, "containment"] += 1
    return seen


def _rival_count(
    view: GraphView, rivals: Counter[tuple[str, str]], p: Pair, short: str, routes: set[str]
) -> int:
    """Other names the shorter one also fits: those met with it, or (when it is mostly
    mentioned away from the longer name) every longer name containing it: "Jiménez"
    beside five people called Jiménez and a town."""
    counts = [rivals[short, r] - 1 for r in routes & RIVALLED]
    long = p[1] if p[0] == short else p[0]
    mine, theirs = view.entities[short].sources, view.entities[long].sources
    if "containment" in routes and mine and len(mine - theirs) > len(mine) / 2:
        counts.append(rivals[short, "anywhere"] - 1)
    return max(0, *counts)


def _surname(p: Pair, names: dict[str, Name], cands: blocking.Candidates) -> bool:
    """The shorter name is the longer one's last word: "Duritz" may stand for "Adam Duritz"."""
    short, long = sorted(p, key=lambda n: len(names[n].tokens))
    toks = names[long].tokens
    return cands[p] == {"containment"} and names[short].tokens == toks[-1:] and len(toks) > 1


async def _sentences(
    view: GraphView, cands: blocking.Candidates, names: dict[str, Name]
) -> dict[Pair, Together]:
    """For pairs sharing chunks: how their names sit in those chunks' sentences."""
    shared = {
        p: sorted(view.entities[p[0]].sources & view.entities[p[1]].sources)[:SHARED_CHUNKS]
        for p in cands
    }
    texts = await _read(view, {c for ids in shared.values() for c in ids})
    return {
        p: together([texts[c] for c in ids if c in texts], *p, anaphora=_surname(p, names, cands))
        for p, ids in shared.items()
        if ids
    }


async def _score_all(
    view: GraphView, names: dict[str, Name], cands: blocking.Candidates, opts: Options
) -> list[PairScore]:
    seen, rivals = await _sentences(view, cands, names), _rivals(view, cands, names)
    out = []
    for (a, b), routes in sorted(cands.items()):
        short = min((a, b), key=lambda n: len(names[n].key))
        n_rivals = _rival_count(view, rivals, (a, b), short, routes) if routes & RIVALLED else 0
        ea, eb = view.entities[a], view.entities[b]
        out.append(score_pair(ea, eb, names[a], names[b], routes, seen.get((a, b)), n_rivals))
    return out


async def _judge_all(
    view: GraphView, scored: list[PairScore], chat: ChatService, opts: Options
) -> int:
    asked = 0
    for p in scored:
        if not p.veto and opts.min_score - opts.judge_band <= p.score < opts.min_score + 0.15:
            asked += await judge(chat, view.entities[p.a], view.entities[p.b], p)
    return asked


async def resolve_view(
    view: GraphView, opts: Options, *, chat: ChatService | None = None
) -> ResolutionReport:
    """Groups of names for one thing in ``view``, with the evidence for and against."""
    started = time.perf_counter()
    names = {n: parse(n) for n in view.entities}
    cands = blocking.candidates(
        names, view.vectors, top_k=opts.vector_top_k, min_sim=opts.vector_min_sim
    )
    await _statements(view, cands)
    scored = await _score_all(view, names, cands, opts)
    asked = await _judge_all(view, scored, chat, opts) if chat is not None else 0
    accepted = [p for p in scored if p.score >= opts.min_score and not p.veto]

    stated = {
        frozenset((names[a].key, names[b].key)) for (a, b), r in cands.items() if "statement" in r
    }

    linked = {frozenset((p.a, p.b)) for p in accepted}
    people = People(names, view.entities)

    def vetoed(x: str, y: str) -> str | None:
        said = frozenset((names[x].key, names[y].key)) in stated
        ex, ey = view.entities[x], view.entities[y]
        if frozenset((x, y)) not in linked and _types_apart(ex, ey):
            return f"types apart within one group: {ex.type} vs {ey.type}"
        return people.shared(x, y) or veto(ex, ey, names[x], names[y], said)

    groups = group_pairs(accepted, vetoed, lambda n: view.entities[n].support)
    report = ResolutionReport(opts.min_score, groups)
    report.near_misses = _near_misses(scored, groups, opts)
    report.stats = {
        "entities": len(names),
        "candidates": len(cands),
        "accepted_pairs": len(accepted),
        "llm_judgements": asked,
        "seconds": round(time.perf_counter() - started, 3),
    }
    return report


LOOSE_TYPES = frozenset({"concept", "unknown", "other", ""})


def _types_apart(a: Entity, b: Entity) -> bool:
    """Two typed names with no type in common, neither a catch-all type: not joined through others."""
    ta, tb = types_of(a) - LOOSE_TYPES, types_of(b) - LOOSE_TYPES
    return bool(ta and tb and not ta & tb)


def _near_misses(scored: list[PairScore], groups: list[Group], opts: Options) -> list[PairScore]:
    grouped = {frozenset((p.a, p.b)) for g in groups for p in g.links}
    kept = [p for p in scored if frozenset((p.a, p.b)) not in grouped and p.score < 1.0]
    kept.sort(key=lambda p: (-(p.veto is not None and "key" in p.routes), -p.score, p.a, p.b))
    return kept[: opts.near_misses]


async def resolve_entities(
    storage: Storage,
    settings: Settings,
    *,
    min_score: float | None = None,
    chat: ChatService | None = None,
) -> ResolutionReport:
    """Resolve the stored graph's entities (reads only); homonyms reported too."""
    started = time.perf_counter()
    opts = Options.from_settings(settings, min_score)
    view = await load_view(storage, with_vectors=opts.vector_top_k > 0)
    report = await resolve_view(view, opts, chat=chat)
    report.homonyms = await find_homonyms(storage, view.entities)
    report.stats["seconds"] = round(time.perf_counter() - started, 3)
    return report
