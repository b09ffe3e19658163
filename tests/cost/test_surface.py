"""``cost_report`` on both façades, with one signature; the blocking one works too."""

from __future__ import annotations

import inspect

from kgrag import KGRag, SyncKGRag
from kgrag.maintenance.cost_report import CostReport
from tests.support.settings import fake_settings

from .helpers import QUESTION, corpus


def test_sync_cost_report_has_the_async_signature():
    sync, real = SyncKGRag.cost_report, KGRag.cost_report
    assert inspect.signature(sync).parameters == inspect.signature(real).parameters
    assert inspect.iscoroutinefunction(real) and not inspect.iscoroutinefunction(sync)


def test_labelled_methods_keep_their_signatures():
    for name in ("delete", "retry_failed", "import_graph", "resolve_entities", "rebuild"):
        method = getattr(KGRag, name)
        assert inspect.iscoroutinefunction(method), name
        assert "self" in inspect.signature(method).parameters, name


def test_the_blocking_report(tmp_path):
    with SyncKGRag(fake_settings(tmp_path / "idx", prices={"fake": [1, 1]})) as rag:
        rag.index_paths(corpus(tmp_path))
        result = rag.query(QUESTION, mode="local")
        report = rag.cost_report(top=1)
    assert isinstance(report, CostReport) and len(report.documents) == 1
    assert report.parts["queries"].calls == result.cost.calls > 0
    assert report.as_dict()["total"]["calls"] == report.total.calls
