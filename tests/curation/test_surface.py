"""The curation methods exist on both façades with one signature, and work blocking too."""

from __future__ import annotations

import inspect

from kgrag.api import KGRag, SyncKGRag
from kgrag.curation.facade import CurationMethods

from .helpers import DOC_A, DOC_B, settings

METHODS = [n for n in vars(CurationMethods) if not n.startswith("_")]


def test_sync_mirrors_every_curation_method():
    assert {"merge_entities", "unmerge", "merges"} <= set(METHODS)
    for name in METHODS:
        real, sync = getattr(KGRag, name), getattr(SyncKGRag, name)
        assert inspect.iscoroutinefunction(real), name
        assert not inspect.iscoroutinefunction(sync), name
        assert inspect.signature(sync).parameters == inspect.signature(real).parameters, name


def test_sync_merge_and_unmerge(tmp_path):
    with SyncKGRag(settings(tmp_path / "idx")) as rag:
        rag.insert([DOC_A, DOC_B], ids=["a", "b"], file_paths=["a", "b"])
        mid = rag.merge_entities("Ebenezer Scrooge", ["Scrooge"])
        assert [m["id"] for m in rag.merges()] == [mid]
        assert "Scrooge" not in {e["name"] for e in rag.export()["entities"]}
        rag.unmerge(mid)
        assert rag.merges() == []
        assert rag.check().ok
