"""An index with entities and no relations still answers in the graph modes."""

from __future__ import annotations

import numpy as np

from kgrag.retrieval.modes.path_graph import PathGraph


def test_a_graph_without_edges_has_zero_totals() -> None:
    # two entities, no half-edges: before, np.add.reduceat got index -1 and raised IndexError,
    # so mix (the default mode) failed on such an index
    graph = PathGraph(
        entities=["FW-A", "FW-B"],
        indptr=np.zeros(3, dtype=np.int64),
        neighbours=np.zeros(0, dtype=np.int64),
        weights=np.zeros(0, dtype=np.float64),
        signature=(2, 0, 0),
    )
    assert graph.totals.tolist() == [0.0, 0.0]
    assert graph.degree(0) == 0 and graph.around(1)[0].size == 0
