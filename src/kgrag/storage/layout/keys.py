"""The stored key formats: how a graph key, a walk-log entry and a cost row are keyed."""

from __future__ import annotations

import json
from collections.abc import Sequence

# Unit separator: cannot occur in a normalised entity name, so the pair
# ("ab", "c") and ("a", "bc") never join alike (relation vector ids hash it too).
PAIR_SEP = "\x1f"

Pair = tuple[str, str]

WALK_SNAPSHOT_KEY = "snapshot"  # walk_graph: the encoded graph (kgrag.knowledge.walk.codec)
WALK_HEAD_KEY = "head"  # walk_graph: the snapshot's version and the log's size


def support_key(key: str | Pair) -> str:
    """The key of an entity name (``e:NAME``) or a relation pair (``r:A<SEP>B``).

    Keys ``graph_support``, ``summary_pending`` and ``manual_edits``.
    """
    if isinstance(key, tuple):
        return "r:" + key[0] + PAIR_SEP + key[1]
    return "e:" + key


def parse_support_key(text: str) -> str | Pair:
    """Inverse of :func:`support_key`."""
    kind, rest = text[:2], text[2:]
    if kind == "r:":
        a, b = rest.split(PAIR_SEP, 1)
        return (a, b)
    return rest


def walk_log_key(version: int) -> str:
    """The ``walk_log`` key of a graph version: 12 digits, so keys sort by version."""
    return f"{version:012d}"


def cost_row_key(fields: Sequence[str]) -> str:
    """The ``cost_ledger`` key of a row: its (day, operation, document, model, role) as JSON."""
    return json.dumps(list(fields), ensure_ascii=False)
