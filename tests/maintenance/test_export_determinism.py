"""Equal graphs export to equal bytes in every format; a failed export leaves the old one."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgrag.errors import ConfigError
from kgrag.maintenance.exports import FORMATS, render, write

from .conftest import AWKWARD, build, export_files


def contents(paths: list[Path]) -> list[bytes]:
    return [p.read_bytes() for p in paths]


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory, corpus: list[Path]) -> Path:
    """A second index of the same documents, indexed in the opposite order."""
    return build(tmp_path_factory.mktemp("export-idx2") / "idx", list(reversed(corpus)))


@pytest.mark.parametrize("fmt", FORMATS)
def test_two_builds_of_one_corpus_export_to_equal_bytes(fmt, index, rebuilt, tmp_path):
    ours = export_files(index, tmp_path / f"a.{fmt}", fmt)
    theirs = export_files(rebuilt, tmp_path / f"b.{fmt}", fmt)
    assert contents(ours) == contents(theirs)


@pytest.mark.parametrize("fmt", ["json", "graphml", "md", "csv"])
def test_the_order_of_fields_in_a_row_does_not_matter(fmt, tmp_path):
    shuffled = {
        **AWKWARD,
        "entities": [dict(reversed(list(e.items()))) for e in AWKWARD["entities"]],
        "relations": [dict(reversed(list(r.items()))) for r in AWKWARD["relations"]],
    }
    one = write(AWKWARD, tmp_path / f"one.{fmt}", fmt)
    two = write(shuffled, tmp_path / f"two.{fmt}", fmt)
    assert contents(one) == contents(two)


def test_a_failed_export_leaves_the_old_file_whole(tmp_path):
    path = tmp_path / "graph.graphml"
    write(AWKWARD, path, "graphml")
    before = path.read_bytes()
    broken = {**AWKWARD, "relations": [*AWKWARD["relations"], {"src": "x"}]}  # no tgt
    with pytest.raises(KeyError):
        write(broken, path, "graphml")
    assert path.read_bytes() == before and list(tmp_path.iterdir()) == [path]


def test_unknown_or_folder_formats_are_refused_as_text(tmp_path):
    with pytest.raises(ConfigError, match="known formats: json, csv, graphml, md, parquet"):
        write(AWKWARD, tmp_path / "x", "xml")
    with pytest.raises(ConfigError, match="not one text file"):
        render(AWKWARD, "csv")
