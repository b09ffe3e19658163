"""Retrieval trace: where each candidate came from and where it was lost.

A :class:`Trace` records, per stage, what each route found (with scores)
and every item that was dropped and why. The stages follow the order in
which a fact can go missing:

``keywords``   which keywords were searched for, and where they came from
``retrieval``  vector / lexical search (cosine threshold, top_k)
``filter``     the query's document filters and disabled documents
``graph``      reading nodes, edges and chunks behind the hits
``rerank``     reranker order
``conditions`` items naming another model number, version or year than asked
``truncation`` chunk_top_k and the token budgets

When tracing is off the engine uses :data:`NO_TRACE`, whose methods do
nothing, so the query path pays nothing for it.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import cast

from kgrag.retrieval.shapes import (
    ConditionsTrace,
    FilterData,
    TraceData,
    TraceDrop,
    TraceItem,
    TraceNote,
    TraceRoute,
)

STAGES = ("keywords", "retrieval", "filter", "graph", "rerank", "conditions", "truncation")
# Routes run concurrently; the trace lists them in this order whatever finished first.
ROUTE_ORDER = (
    "local",
    "local/edges",
    "global",
    "global/endpoints",
    "chunks",
    "lexical",
    "chunks/rrf",
    "entity/chunks",
    "relation/chunks",
    "ppr/entities/query",
    "ppr/entities/low",
    "ppr/names",
    "ppr/relations",
    "ppr/chunks/dense",
    "ppr/lexical",
    "ppr/seeds",
    "ppr",
    "ppr/chunks",
    "path/seeds",
    "path/targets",
    "path/endpoints/seeds",
    "path/endpoints/targets",
    "path",
    "rerank",
)

_HINTS = {
    "retrieval": "check the keywords, the embedding, cosine_threshold and top_k",
    "filter": "check the query's doc / path / where filters and the disabled documents (`kgrag docs`)",
    "graph": "check the graph keys, edge endpoints and source chunk ids (index consistency)",
    "rerank": "check the reranker, or query with enable_rerank=False",
    "conditions": "the item names another model, version or year than the question; "
    "keep_conflicting=True (--keep-conflicting) keeps it",
    "truncation": "check chunk_top_k and the token budgets (max_entity_tokens, "
    "max_relation_tokens, max_total_tokens)",
}


def relation_id(a: str, b: str) -> str:
    """How a relation is named in traces."""
    return f"{a} <-> {b}"


class Trace:
    """Collects the stage-by-stage record of one query."""

    enabled = True

    def __init__(self) -> None:
        self.info: dict[str, object] = {}  # the facts of TraceData set so far
        self.routes: list[TraceRoute] = []
        self.dropped: list[TraceDrop] = []
        self.notes: list[TraceNote] = []

    def set(self, key: str, value: object) -> None:
        """Record a top-level fact (question, mode, parameters, keywords, totals)."""
        self.info[key] = value

    def candidates(self, route: str, kind: str, items: list[TraceItem], query: str = "") -> None:
        """What ``route`` found, best first; each item has ``id`` and ``score``."""
        self.routes.append({"route": route, "kind": kind, "query": query, "items": items})

    def drop(
        self,
        stage: str,
        kind: str,
        item_id: str,
        reason: str,
        score: float | None = None,
        route: str = "",
    ) -> None:
        """Record that ``item_id`` was lost at ``stage`` (in ``route``) because of ``reason``."""
        entry: TraceDrop = {"stage": stage, "kind": kind, "id": item_id, "reason": reason}
        if score is not None:
            entry["score"] = round(float(score), 4)
        if route:
            entry["route"] = route
        self.dropped.append(entry)

    def note(self, stage: str, message: str) -> None:
        """A free-form remark about ``stage``."""
        self.notes.append({"stage": stage, "message": message})

    def chunk_ids(self) -> builtins.set[str]:  # ``set`` here is the method
        """Every chunk id the trace mentions."""
        ids = {str(i["id"]) for r in self.routes if r["kind"] == "chunk" for i in r["items"]}
        return ids | {d["id"] for d in self.dropped if d["kind"] == "chunk"}

    def label_chunks(self, files: dict[str, str]) -> None:
        """Add the file path of each chunk mentioned (``files``: id -> path)."""
        entries = [i for r in self.routes if r["kind"] == "chunk" for i in r["items"]]
        for entry in entries:
            if entry["id"] in files:
                entry["file"] = files[str(entry["id"])]
        for drop in self.dropped:
            if drop["kind"] == "chunk" and drop["id"] in files:
                drop["file"] = files[drop["id"]]

    def to_dict(self) -> TraceData:
        """Everything recorded, routes and drops in a fixed order (stable otherwise)."""
        routes = sorted(self.routes, key=lambda r: _route_rank(r["route"]))
        dropped = sorted(
            self.dropped, key=lambda d: (STAGES.index(d["stage"]), _route_rank(d.get("route", "")))
        )
        data = {**self.info, "routes": routes, "dropped": dropped, "notes": self.notes}
        return cast("TraceData", data)  # info holds TraceData's facts (see Trace.set)


def _route_rank(route: str) -> int:
    return ROUTE_ORDER.index(route) if route in ROUTE_ORDER else len(ROUTE_ORDER)


class _NoTrace(Trace):
    """A trace that records nothing."""

    enabled = False

    def set(self, key: str, value: object) -> None:
        pass

    def candidates(self, route: str, kind: str, items: list[TraceItem], query: str = "") -> None:
        pass

    def drop(
        self,
        stage: str,
        kind: str,
        item_id: str,
        reason: str,
        score: float | None = None,
        route: str = "",
    ) -> None:
        pass

    def note(self, stage: str, message: str) -> None:
        pass


NO_TRACE = _NoTrace()


def _fmt_score(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else "  -  "


def _name(entry: Mapping[str, object]) -> str:
    return f"{entry['id']} ({entry['file']})" if entry.get("file") else str(entry["id"])


def _render_routes(trace: TraceData, limit: int, out: list[str]) -> None:
    for route in trace.get("routes", []):
        items = route["items"]
        query = f' for "{route["query"]}"' if route.get("query") else ""
        out.append(f"  {route['route']} -> {len(items)} {route['kind']} candidate(s){query}")
        for item in items[:limit]:
            out.append(f"    {_fmt_score(item.get('score'))}  {_name(item)}")
        if len(items) > limit:
            out.append(f"    ... and {len(items) - limit} more")


def _render_drops(trace: TraceData, limit: int, out: list[str]) -> None:
    dropped = trace.get("dropped", [])
    for stage in STAGES:
        here = [d for d in dropped if d["stage"] == stage]
        notes = [n for n in trace.get("notes", []) if n["stage"] == stage]
        if not here and not notes:
            continue
        out.append(
            f"[{stage}] {len(here)} item(s) lost"
            + (f" ({_HINTS[stage]})" if here and stage in _HINTS else "")
        )
        for note in notes:
            out.append(f"  note: {note['message']}")
        for d in here[:limit]:
            score = f" score {d['score']:.3f}" if "score" in d else ""
            out.append(f"  - {d['kind']} {_name(d)}:{score} {d['reason']}")
        if len(here) > limit:
            out.append(f"  ... and {len(here) - limit} more")


def where_lost(trace: TraceData, item_id: str) -> str:
    """Where ``item_id`` (an entity name, ``"A <-> B"`` or a chunk id) went, in one line.

    Kept items name the routes that found them; lost ones the stage and the
    reason; items no route ever saw point at extraction or the keywords.
    """
    lost = [d for d in trace.get("dropped", []) if d["id"] == item_id]
    found = [
        r["route"] for r in trace.get("routes", []) if any(i["id"] == item_id for i in r["items"])
    ]
    if lost:
        d = lost[-1]
        seen = f" (found by {', '.join(found)})" if found else ""
        return f"{item_id}: lost at {d['stage']}{seen}: {d['reason']}"
    if found:
        return f"{item_id}: found by {', '.join(found)} and kept"
    return (
        f"{item_id}: no route saw it; check that extraction produced it (is it in the graph?) "
        f"and that the keywords name it"
    )


def filter_summary(applied: FilterData) -> str:
    """One line naming a query's document filter (a ``DocFilter.describe()`` dict)."""
    parts = [
        f"{name}={applied[name]}" for name in ("doc_ids", "path_glob", "where") if applied.get(name)
    ]
    if applied.get("documents") is not None:
        parts.append(f"{applied['documents']} document(s) retrievable")
    if applied.get("disabled"):
        parts.append(f"{len(applied['disabled'])} disabled document(s) excluded")
    for doc, why in (applied.get("excluded") or {}).items():
        parts.append(f"{doc} left out ({why})")
    return ", ".join(parts) or "none"


def conditions_summary(info: ConditionsTrace) -> list[str]:
    """The ``[conditions]`` lines: the question's constraints and where they came from."""
    asked = [f"{c['value']} ({c['kind']})" for c in info.get("constraints", [])]
    if not asked:
        return []
    error = f", {info['error']}" if info.get("error") else ""
    return [
        f"[conditions] source: {info.get('source', '?')}{error}",
        f"  asked: {', '.join(asked)}",
    ]


def render_trace(trace: TraceData, limit: int = 10) -> str:
    """A short human-readable account of a trace (for ``kgrag query --explain``).

    ``trace`` is the ``"trace"`` dict of :meth:`QueryEngine.query_data`;
    ``limit`` caps the items listed per route and per stage.
    """
    out = [
        f'Retrieval trace: mode {trace.get("mode", "?")}, question "{trace.get("question", "")}"'
    ]
    kw = trace.get("keywords")
    if kw:
        out.append(f"[keywords] source: {kw.get('source', '?')}")
        out.append(f"  low-level:  {', '.join(kw.get('low_level', [])) or '(none)'}")
        out.append(f"  high-level: {', '.join(kw.get('high_level', [])) or '(none)'}")
    params = trace.get("params") or {}
    if params:
        out.append("[params] " + " ".join(f"{k}={v}" for k, v in params.items()))
    applied = trace.get("filter")
    if applied and applied.get("active"):
        out.append("[filter] " + filter_summary(applied))
    conditions = trace.get("conditions")
    out += conditions_summary(conditions) if conditions else []
    out.append("[retrieval] candidates per route:")
    _render_routes(trace, limit, out)
    _render_drops(trace, limit, out)
    final = trace.get("final") or {}
    if final:
        out.append("[context] " + ", ".join(f"{k}: {v}" for k, v in final.items()))
    out.append(
        "An expected fact in none of the lists above was never retrieved: check that "
        "extraction put it in the graph and that the keywords name it."
    )
    return "\n".join(out)
