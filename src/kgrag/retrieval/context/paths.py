"""The path section of the context: chains of the relations listed above it.

A path is shown as one JSON line, its chain written out and the reference
numbers of its relations (paths take no numbers of their own)::

    {"path": "Mira Solen —studied under→ Ovid Tark ←founded— Harrow Guild", "relations": [4, 5]}

An arrow points the way the relation was stated; ``—kw—`` when no
direction is known. A path is kept only when all its relations made it
into the relation section, and while its lines fit the budget (the
section's header included); the section sits before the chunks.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING

from kgrag.retrieval.context import headers as H
from kgrag.retrieval.context.sections import Fitted, SectionBudget
from kgrag.retrieval.records import PathHit, RelationHit
from kgrag.retrieval.shapes import PathData
from kgrag.retrieval.trace import Trace
from kgrag.storage.base import edge_key
from kgrag.storage.layout.rows import EdgeRow

if TYPE_CHECKING:
    from kgrag.llm.tokenizer import Tokenizer

PATHS_HEADER = (
    "Knowledge graph paths (one JSON object per line; each chains relations listed above, "
    '"relations" gives their reference_id in order):'
)
# Keywords of a relation shown on its arrow, at most.
ARROW_WORDS = 3


def _label(data: EdgeRow) -> str:
    words = [w.strip() for w in str(data.get("keywords") or "").split(",") if w.strip()]
    return ", ".join(words[:ARROW_WORDS]) or "related to"


def _forward(data: EdgeRow, a: str, b: str) -> bool | None:
    """True when ``a -> b`` was stated, False when only ``b -> a`` was, None when neither."""
    ways = {tuple(d) for d in data.get("directions") or [] if isinstance(d, (list, tuple))}
    if (a, b) in ways:
        return True
    return False if (b, a) in ways else None


def chain_text(path: PathHit) -> str:
    """``A —kw→ B ←kw— C``: the path's entities and the relations between them."""
    out = [path.nodes[0]]
    for a, b, data in zip(path.nodes, path.nodes[1:], path.edges, strict=False):
        label, way = _label(data), _forward(data, a, b)
        arrow = f"—{label}→" if way else f"←{label}—" if way is False else f"—{label}—"
        out += [arrow, b]
    return " ".join(out)


def path_line(path: PathHit, numbers: Sequence[int | str]) -> str:
    return json.dumps({"path": chain_text(path), "relations": list(numbers)}, ensure_ascii=False)


def path_keys(path: PathHit) -> list[tuple[str, str]]:
    """The canonical keys of the path's relations, in order."""
    return [edge_key(a, b) for a, b in pairwise(path.nodes)]


def _header_tokens(tokenizer: Tokenizer) -> int:
    return tokenizer.count(PATHS_HEADER + "\n" + H.fenced("", "json")) + 2


def _line_tokens(path: PathHit, tokenizer: Tokenizer) -> int:
    """A path line's cost, costed with three-digit numbers (the real ones come last)."""
    return tokenizer.count(path_line(path, [999] * path.hops)) + 1


def path_reserve(paths: Sequence[PathHit], max_relation_tokens: int, tokenizer: Tokenizer) -> int:
    """Tokens of the relation budget kept for the path lines: all of them, at most a quarter."""
    if not paths:
        return 0
    want = _header_tokens(tokenizer) + sum(_line_tokens(p, tokenizer) for p in paths)
    return min(want, max_relation_tokens // 4)


def path_budget(max_relation_tokens: int, relation_tokens: int, room_left: int) -> SectionBudget:
    """What the relation budget leaves for paths (``room_left``: room after entities and relations)."""
    tokens = max(min(max_relation_tokens - relation_tokens, room_left), 0)
    if tokens < max_relation_tokens - relation_tokens:
        reason = f"max_total_tokens exhausted (path section got {tokens} tokens)"
    else:
        reason = (
            f"max_relation_tokens {max_relation_tokens} exhausted (paths share it with relations)"
        )
    return SectionBudget(tokens, reason)


def fit_paths(
    paths: Sequence[PathHit],
    relations: Sequence[RelationHit],
    budget: SectionBudget,
    tokenizer: Tokenizer,
    trace: Trace,
) -> Fitted:
    """The paths whose relations are all in ``relations``, while they fit ``budget``.

    The header counts with the first path kept.
    """
    shown = {r.key for r in relations}
    out = Fitted()
    header = _header_tokens(tokenizer)
    for path in paths:
        if not all(k in shown for k in path_keys(path)):
            trace.drop(
                "truncation",
                "path",
                path.id,
                "a relation of it did not fit the relation section",
                path.score,
            )
            out.dropped += 1
            continue
        cost = (
            tokenizer.count(path_line(path, [999] * path.hops)) + 1 + (0 if out.items else header)
        )
        if out.tokens + cost > budget.tokens:
            trace.drop("truncation", "path", path.id, budget.reason, path.score)
            out.dropped += 1
            continue
        out.items.append(path)
        out.tokens += cost
    return out


def numbered_lines(
    paths: Sequence[PathHit], relations: Sequence[RelationHit], numbers: Sequence[int]
) -> list[str]:
    """Each path's line with the reference numbers its relations were given."""
    number_of = {r.key: n for r, n in zip(relations, numbers, strict=False)}
    return [path_line(p, [number_of[k] for k in path_keys(p)]) for p in paths]


def with_paths(context: str, lines: Sequence[str]) -> str:
    """``context`` with the path section before its chunks (at its end when it has none)."""
    if not lines:
        return context
    section = f"{PATHS_HEADER}\n{H.fenced(chr(10).join(lines), 'json')}"
    at = context.find(H.CHUNKS_HEADER)
    if at < 0:
        return f"{context}\n\n{section}" if context else section
    return f"{context[:at]}{section}\n\n{context[at:]}"


def path_data(path: PathHit) -> PathData:
    """A path as ``query_data`` lists it."""
    return {
        "nodes": list(path.nodes),
        "chain": chain_text(path),
        "hops": path.hops,
        "score": round(float(path.score), 6),
        "open": path.open,
        "relations": [list(k) for k in path_keys(path)],
        "route": path.route,
    }
