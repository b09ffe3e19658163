"""Cheap blocking: which pairs of names are worth scoring at all.

Never all pairs. Each rule is an index lookup: equal keys
(:mod:`kgrag.curation.resolution.names`), token containment (the shorter name's
words all in the longer one, found through the rarest word's postings),
acronyms of multi-word names, a CJK name inside a longer one (玄德 in
刘玄德), and the nearest neighbours of name vectors. Buckets and postings
larger than ``MAX_BUCKET`` are skipped: a word shared by thousands of
names identifies none of them.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from kgrag.curation.resolution.names import Name, acronyms

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
                if Counter(name.tokens) - Counter(theirs):  # "Bora Bora" is not in "Bora Island"
                    continue
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
    vectors: dict[str, np.ndarray],
    out: Candidates,
    *,
    top_k: int = 5,
    min_sim: float = 0.9,
    names: dict[str, Name] | None = None,
) -> None:
    """Each name's ``top_k`` nearest names by cosine similarity, at least ``min_sim``.

    Names are compared within buckets of the same first letter of their
    key (spelling variants share it: Tchaikovsky, Tschaikowsky), which
    divides the work by about the alphabet's size; each bucket is blocked
    products of normalised float32 rows, ``ROWS`` at a time, so memory stays
    at one block of similarities whatever the graph's size.
    """
    buckets: dict[str, list[str]] = defaultdict(list)
    for n in sorted(vectors):
        key = names[n].key if names and n in names else n.casefold()
        buckets[key[:1]].append(n)
    for members in buckets.values():
        if len(members) > 1 and top_k > 0:
            _nearest(members, vectors, out, top_k, min_sim)


ROWS = 256
SKETCH = 64  # dimensions of the random projection the search runs on
SLACK = 0.1  # how far below min_sim a sketched similarity may fall and still be checked


def _unit(mat: np.ndarray) -> np.ndarray:
    unit: np.ndarray = mat / np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-12)
    return unit


def _nearest(
    members: list[str], vectors: dict[str, np.ndarray], out: Candidates, top_k: int, min_sim: float
) -> None:
    """Search on a fixed random projection to ``SKETCH`` dimensions, then check exactly.

    A random projection keeps cosine similarities within about
    ``1/sqrt(SKETCH)`` for unrelated vectors and much closer for similar
    ones, so searching at ``min_sim - SLACK`` misses no true neighbour,
    and every pair found is checked on the full vectors.
    """
    mat = _unit(np.stack([np.asarray(vectors[n], dtype=np.float32) for n in members]))
    sketch, floor = mat, min_sim
    if mat.shape[1] > SKETCH:
        proj = np.random.default_rng(0).standard_normal((mat.shape[1], SKETCH)).astype(np.float32)
        sketch, floor = _unit(mat @ proj), min_sim - SLACK
    for start in range(0, len(members), ROWS):
        rows, cols = np.nonzero(sketch[start : start + ROWS] @ sketch.T >= floor)
        best: dict[int, list[tuple[float, int]]] = defaultdict(list)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            sim = float(mat[start + r] @ mat[c])
            if start + r != c and sim >= min_sim:
                best[r].append((sim, c))
        for r, hits in best.items():
            for _, c in sorted(hits, reverse=True)[:top_k]:
                _add(out, members[start + r], members[c], "vector")


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
        by_vectors(vectors, out, top_k=top_k, min_sim=min_sim, names=names)
    return out
