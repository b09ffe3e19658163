"""The flow-pruned path search on the hand-built graph of :mod:`query.path_corpus`."""

from __future__ import annotations

import pytest

from kgrag.retrieval.modes.path_graph import PathGraph, build_adjacency
from kgrag.retrieval.modes.path_search import (
    Endpoint,
    FoundPath,
    PathLimits,
    search_paths,
    select_paths,
)
from tests.retrieval.path_corpus import CHAIN, RELATIONS


class CountingGraph(PathGraph):
    """A path graph that counts how often a node's neighbours are read (one expansion each)."""

    reads = 0

    def around(self, node):
        self.reads += 1
        return PathGraph.around(self, node)


def graph_of(relations=RELATIONS) -> CountingGraph:
    names = list(dict.fromkeys(n for a, _, b in relations for n in (a, b)))
    index = {n: i for i, n in enumerate(names)}
    rows = [(a, b, 1.0) for a, _, b in relations]
    indptr, nbrs, weights = build_adjacency(names, rows, index)
    return CountingGraph(names, indptr, nbrs, weights, (0, 0, 0), index)


def ends(graph: PathGraph, *names: str) -> list[Endpoint]:
    return [Endpoint(graph.index[n], group) for group, n in enumerate(names)]


def named(graph: PathGraph, path: FoundPath) -> list[str]:
    return [graph.entities[i] for i in path.nodes]


def test_the_three_hop_chain_is_found_in_order_and_beats_the_hub_detour():
    g = graph_of()
    out = search_paths(g, ends(g, "Mira Solen", "Quill Prize"), PathLimits())
    connecting = [p for p in out.paths if not p.open]
    best = named(g, connecting[0])
    assert best in (CHAIN, CHAIN[::-1])
    hub = next(p for p in connecting if "Writers" in named(g, p))
    assert hub.score < connecting[0].score
    assert out.stopped == "done"


def test_a_path_and_its_reverse_count_once():
    g = graph_of()
    out = search_paths(g, ends(g, "Mira Solen", "Quill Prize"), PathLimits())
    keys = [p.nodes for p in out.paths if not p.open]
    assert len(keys) == len({min(k, k[::-1]) for k in keys})
    assert sum(1 for p in out.paths if set(named(g, p)) == set(CHAIN)) == 1


def test_hops_beyond_max_hops_are_not_searched():
    g = graph_of()
    out = search_paths(g, ends(g, "Mira Solen", "Quill Prize"), PathLimits(max_hops=2))
    assert out.paths and all(p.hops <= 2 for p in out.paths)
    assert not any(set(named(g, p)) == set(CHAIN) for p in out.paths)


def test_expansions_stop_at_max_expanded():
    g = graph_of()
    out = search_paths(g, ends(g, "Mira Solen", "Quill Prize"), PathLimits(max_expanded=3))
    assert out.expanded == 3 and g.reads == 3
    assert out.stopped == "max_expanded"
    g2 = graph_of()
    full = search_paths(g2, ends(g2, "Mira Solen", "Quill Prize"), PathLimits())
    assert g2.reads == full.expanded > 3


def test_flow_below_the_threshold_is_not_followed():
    g = graph_of()
    # From the hub each filler gets 0.8 / 62 of its resource: below this threshold.
    out = search_paths(g, ends(g, "Writers", "Kessel"), PathLimits(threshold=0.02))
    assert not any(p.nodes[-1] == g.index["Filler Name 3"] for p in out.paths)
    assert g.reads == out.expanded < 10


def test_paths_of_one_name_are_not_joined():
    g = graph_of()
    same = [Endpoint(g.index["Mira Solen"], 0), Endpoint(g.index["Quill Prize"], 0)]
    out = search_paths(g, same, PathLimits())
    assert all(p.open for p in out.paths)


def test_targets_do_not_connect_to_each_other():
    g = graph_of()
    targets = [Endpoint(g.index[n], i, anchor=False) for i, n in enumerate(("Kessel", "Dorn"))]
    assert search_paths(g, targets, PathLimits()).paths == []


@pytest.mark.parametrize("limit", [1, 2, 5])
def test_select_keeps_at_most_max_paths(limit):
    g = graph_of()
    out = search_paths(g, ends(g, "Mira Solen", "Quill Prize"), PathLimits())
    assert len(select_paths(out.paths, limit)) == limit


def test_select_folds_sub_paths_into_longer_ones():
    a, ab, abc, other = (0, 1), (1, 0), (0, 1, 2), (3, 4)
    ranked = [FoundPath(a, 0.9), FoundPath(other, 0.8), FoundPath(abc, 0.5), FoundPath(ab, 0.4)]
    kept = select_paths(ranked, 2)
    assert [p.nodes for p in kept] == [other, abc]  # the longer chain replaces the shorter


def test_open_paths_come_after_connecting_ones_and_never_displace_them():
    ranked = [FoundPath((0, 1, 2), 0.9, open=True), FoundPath((5, 6), 0.1), FoundPath((0, 1), 0.05)]
    assert [p.nodes for p in select_paths(ranked, 2)] == [(5, 6), (0, 1)]
    # with room, the open path that carries a connecting one a hop further is added
    assert [p.nodes for p in select_paths(ranked, 3)] == [(5, 6), (0, 1), (0, 1, 2)]
