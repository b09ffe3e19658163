"""A worker takes the one write path: queued through IndexingService, worked through it too."""

from __future__ import annotations

from pathlib import Path

from kgrag.api.facade import KGRag
from kgrag.indexing.service import watch
from kgrag.indexing.worker import WorkerOptions
from tests.indexing.lifecycle_corpus import document, write
from tests.support.postgres import fresh_workspace
from tests.support.settings import fake_settings


async def test_a_worker_runs_through_the_service(pg_dsn: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "a.txt", document([0, 1]))
    write(docs, "b.txt", document([2]))
    settings = fake_settings(
        tmp_path / "idx",
        storage="postgres",
        postgres_dsn=pg_dsn,
        postgres_workspace=fresh_workspace(),
    )
    async with KGRag(settings) as rag:
        with watch() as runs:
            queued, errors = await rag.enqueue_paths([docs])
            report = await rag.work(WorkerOptions(concurrency=2, poll_s=0.05, exit_when_idle=True))
    assert errors == [] and [r.kind for r in runs] == ["enqueue", "work"]
    assert sorted(runs[0].documents) == sorted(queued.queued)
    assert sorted(runs[1].documents) == sorted(report.processed) == sorted(queued.queued)
