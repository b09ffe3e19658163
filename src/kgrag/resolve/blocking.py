"""Cheap blocking: which pairs of names are worth scoring at all.

Never all pairs. Each rule is an index lookup: equal keys
(:mod:`kgrag.resolve.names`), token containment (the shorter name's
words all in the longer one, found through the rarest word's postings),
acronyms of multi-word names, a CJK name inside a longer one (玄德 in
刘玄德), and the nearest neighbours of name vectors. Buckets and postings
larger than ``MAX_BUCKET`` are skipped: a word shared by thousands of
names identifies none of them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from kgrag.resolve.names import Name, acronyms

Pair = tuple[str, str]
Candidates = dict[Pair, set[str]]
MAX_BUCKET = 200
MAX_EXTRA_WORDS = 3


def pair(a: str, b: str) -> Pair:
    return (a, b) if a <= b else (b, a)


def _add(out: Candidates, a: str, b: str, route: str) -> None:
    if a != b:
        out.setdefault(pair(a, b), set()).add(route)


def by_key(names: dict[str, Name], out: Candidates) -> None:
    """Names whose keys are equal (case, width, script, honorifics, suffixes...)."""
    buckets: dict[str, list[str]] = defaultdict(list)
    for raw, name in names.items():
        if name.key:
            buckets[name.key].append(raw)
    for members in buckets.values():
        if 1 < len(members) <= MAX_BUCKET:
            for i, a in enumerate(members):
                for b in members[i + 1 :]:
                    _add(out, a, b, "key")


def by_containment(names: dict[str, Name], out: Candidates) -> None:
    """A short name whose words are all words of a longer one (``Scrooge`` in ``Ebenezer Scrooge``)."""
    postings: dict[str, list[str]] = defaultdict(list)
    for raw, name in names.items():
        if not name.cjk:
            for token in set(name.tokens):
                postings[token].append(raw)
    for raw, name in names.items():
        if name.cjk or not name.tokens or len(name.tokens) > 3:
            continue
        rarest = min(set(name.tokens), key=lambda t: len(postings[t]))
        if len(postings[rarest]) > MAX_BUCKET:
            continue
        mine = set(name.tokens)
        for other in postings[rarest]:
            theirs = names[other].tokens
            if len(mine) < len(set(theirs)) <= len(mine) + MAX_EXTRA_WORDS and mine <= set(theirs):
                _add(out, raw, other, "containment")


def by_cjk_suffix(names: dict[str, Name], out: Candidates) -> None:
    """A CJK name ending a longer one by one or two characters (玄德 in 刘玄德, 孔明 in 诸葛孔明)."""
    keyed: dict[str, list[str]] = defaultdict(list)
    for raw, name in names.items():
        if name.cjk and len(name.key) >= 2:
            keyed[name.key].append(raw)
    for raw, name in names.items():
        if not name.cjk or len(name.key) < 3:
            continue
        for cut in (1, 2):
            rest = name.key[cut:]
            if len(rest) >= 2:
                for other in keyed.get(rest, ())[:MAX_BUCKET]:
                    _add(out, raw, other, "containment")


def by_acronym(names: dict[str, Name], out: Candidates) -> None:
    """A one-word name equal to the initials of a multi-word one (IBM, NBA, U.S.)."""
    singles: dict[str, list[str]] = defaultdict(list)
    for raw, name in names.items():
        if len(name.tokens) == 1 and not name.cjk and 2 <= len(name.key) <= 8 and _caps(raw):
            singles[name.key].append(raw)
    for raw, name in names.items():
        for initials in acronyms(name):
            for other in singles.get(initials, ())[:MAX_BUCKET]:
                _add(out, raw, other, "acronym")


def _caps(raw: str) -> bool:
    """Written as an acronym: capitals (U.S., IBM), not a word (Apple)."""
    letters = [c for c in raw if c.isalpha()]
    return len(letters) >= 2 and sum(c.isupper() for c in letters) >= len(letters) - 1


def by_vectors(
    vectors: dict[str, np.ndarray], out: Candidates, *, top_k: int = 5, min_sim: float = 0.9
) -> None:
    """Each name's ``top_k`` nearest names by cosine similarity above ``min_sim``.

    Blocked matrix products over normalised float32 rows, so memory stays
    at one block of similarities (``rows x N``) whatever the graph's size.
    """
    names = sorted(vectors)
    if len(names) < 2 or top_k < 1:
        return
    mat = np.stack([np.asarray(vectors[n], dtype=np.float32) for n in names])
    mat /= np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-12)
    k = min(top_k + 1, len(names))
    for start in range(0, len(names), 1024):
        sims = mat[start : start + 1024] @ mat.T
        for row, col in _top(sims, k, min_sim):
            if start + row != col:
                _add(out, names[start + row], names[col], "vector")


def _top(sims: np.ndarray, k: int, min_sim: float) -> Iterable[tuple[int, int]]:
    cols = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    rows = np.arange(sims.shape[0])[:, None]
    keep = sims[rows, cols] >= min_sim
    for r, c in zip(*np.nonzero(keep), strict=True):
        yield int(r), int(cols[r, c])


def candidates(
    names: dict[str, Name],
    vectors: dict[str, np.ndarray] | None = None,
    *,
    top_k: int = 5,
    min_sim: float = 0.9,
) -> Candidates:
    """Every blocked pair with the rules that proposed it."""
    out: Candidates = {}
    for rule in (by_key, by_containment, by_cjk_suffix, by_acronym):
        rule(names, out)
    if vectors:
        by_vectors(vectors, out, top_k=top_k, min_sim=min_sim)
    return out
