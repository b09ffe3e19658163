"""Blocking proposes the pairs worth scoring, and only those."""

from __future__ import annotations

import numpy as np

from kgrag.curation.resolution import blocking
from kgrag.curation.resolution.names import parse


def routes(raw_names, vectors=None, **kw):
    names = {n: parse(n) for n in raw_names}
    return blocking.candidates(names, vectors, **kw)


def test_name_rules():
    got = routes(
        ["Ebenezer Scrooge", "Scrooge", "Mr. Scrooge", "IBM", "International Business Machines"]
    )
    got.update(routes(["刘玄德", "玄德", "London"]))
    assert got[("Ebenezer Scrooge", "Scrooge")] == {"containment"}
    assert "key" in got[("Mr. Scrooge", "Scrooge")]
    assert got[("IBM", "International Business Machines")] == {"acronym"}
    assert got[("刘玄德", "玄德")] == {"containment"}
    assert not any("London" in p for p in got)


def test_a_word_is_no_acronym():
    assert ("Ape", "Apple Pie Eaters") not in routes(["Ape", "Apple Pie Eaters"])
    assert routes(["APE", "Apple Pie Eaters"])[("APE", "Apple Pie Eaters")] == {"acronym"}


def test_a_repeated_word_counts_twice():
    got = routes(["Bora Bora", "Bora Island", "Bora Bora Island"])
    assert ("Bora Bora", "Bora Island") not in got
    assert got[("Bora Bora", "Bora Bora Island")] == {"containment"}


def test_vector_neighbours_with_the_projection():
    rng = np.random.default_rng(1)
    names = [f"Tname{i}" for i in range(600)]
    vectors = {n: rng.standard_normal(384).astype(np.float32) for n in names}
    vectors["Tname0x"] = vectors["Tname0"] + 0.05 * rng.standard_normal(384).astype(np.float32)
    got = routes([*names, "Tname0x"], vectors, top_k=3, min_sim=0.9)
    vector_pairs = {p for p, r in got.items() if "vector" in r}
    assert vector_pairs == {("Tname0", "Tname0x")}
