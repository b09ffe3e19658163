"""Patching a walk graph gives the arrays assembling it from all rows gives, and it round-trips."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kgrag.knowledge.walk.codec import decode, encode
from kgrag.knowledge.walk.graph import Rows, WalkGraph, alt_key, assemble, differences, empty
from kgrag.knowledge.walk.patch import patch

NAMES = ["Ada", "Big Hero 6", "Big Hero 6 (film)", "Cy", "Dot", "Eve", "Fay (band)", "Gus"]
CHUNKS = [f"c{i}" for i in range(6)]

# A state: each present entity's sources, the edges (a, b, weight), the live chunks.
State = tuple[dict[str, list[str]], dict[tuple[str, str], float], list[str]]

states = st.tuples(
    st.dictionaries(st.sampled_from(NAMES), st.lists(st.sampled_from(CHUNKS), max_size=4)),
    st.dictionaries(
        st.tuples(st.sampled_from(NAMES), st.sampled_from(NAMES)),
        st.sampled_from([0.0, 1.0, 2.5]),
        max_size=10,
    ),
    st.lists(st.sampled_from(CHUNKS), unique=True),
)


def full_rows(state: State) -> Rows:
    sources, edges, chunks = state
    names = sorted(sources)
    return Rows(names, [sources[n] for n in names], _edges(edges), chunks=chunks)


def _edges(edges: dict[tuple[str, str], float]) -> list[tuple[str, str, float]]:
    return [(min(a, b), max(a, b), w) for (a, b), w in edges.items()]


def change_rows(old: State, new: State) -> Rows:
    """What a commit from ``old`` to ``new`` touched, read from ``new``.

    As in the store, an entity citing a chunk that appears or goes is touched
    (the chunk's facts name it).
    """
    moved = set(old[2]) ^ set(new[2])
    touched = set(old[0]) ^ set(new[0])
    touched |= {n for n in set(old[0]) & set(new[0]) if old[0][n] != new[0][n]}
    touched |= {n for state in (old, new) for n, src in state[0].items() if moved & set(src)}
    for pair in set(old[1]) | set(new[1]):
        if old[1].get(pair) != new[1].get(pair):
            touched.update(pair)
    present = sorted(n for n in touched if n in new[0])
    edges = {p: w for p, w in new[1].items() if set(p) & set(present)}
    return Rows(
        present,
        [new[0][n] for n in present],
        _edges(edges),
        touched - set(present),
        sorted(c for c in moved if c in new[2]),
        {c for c in moved if c not in new[2]},
    )


def with_sims(graph: WalkGraph, mask: np.ndarray | None = None) -> WalkGraph:
    """Similarities as a function of the pair, as the store's vectors would give."""
    rows = np.flatnonzero(mask) if mask is not None else np.arange(len(graph.ec))
    for r in rows:
        e, c = graph.ec[r]
        graph.sim[r] = (len(graph.entities[e]) * 7 + int(graph.chunks[c][1:])) % 10 / 10
    return graph


@settings(max_examples=300, deadline=None)
@given(states, states)
def test_patch_equals_assemble(old, new):
    before = with_sims(assemble(1, full_rows(old)))
    patched, missing = patch(before, 2, change_rows(old, new))
    want = with_sims(assemble(2, full_rows(new)))
    assert differences(with_sims(patched, missing), want) == []
    assert np.array_equal(patched.sim, want.sim) and np.array_equal(patched.weight, want.weight)


@settings(max_examples=50, deadline=None)
@given(states)
def test_codec_round_trip(state):
    graph = with_sims(assemble(7, full_rows(state)))
    back = decode(encode(graph))
    assert back is not None and back.version == 7
    assert differences(back, graph) == [] and np.array_equal(back.sim, graph.sim)
    assert decode({**encode(graph), "format": -1}) is None


def test_assemble_keeps_live_pairs_and_real_edges():
    rows = Rows(
        ["Cy", "Ada", "Gus"],
        [["c1", "gone", "c1"], ["c0"], []],
        [("Ada", "Cy", 2.0), ("Ada", "Ada", 1.0), ("Ada", "Nobody", 1.0), ("Cy", "Gus", -1.0)],
        chunks=["c1", "c0"],
    )
    g = assemble(0, rows)
    assert g.entities == ["Ada", "Cy", "Gus"] and g.chunks == ["c0", "c1"]
    assert g.ec.tolist() == [[0, 0], [1, 1]]
    assert g.ee.tolist() == [[0, 1], [1, 2]] and g.weight.tolist() == [2.0, 0.0]
    assert differences(empty(), assemble(0, Rows())) == []


def test_alt_key_strips_a_trailing_qualifier_only():
    assert alt_key("Big Hero 6 (film)") == "big hero 6"
    assert alt_key("Big Hero 6") == "" and alt_key("泡泡堂（游戏）") == "泡泡堂"
