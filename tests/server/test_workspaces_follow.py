"""The server follows what another process records: readers and writers reopen, job records are shared.

Two :class:`Workspaces` (and :class:`Jobs`) on one workdir stand for two
server processes; a plain :class:`KGRag` stands for ``kgrag index`` run
beside them. The first run into a workdir of Chinese text records the
language it detected: a server instance opened before must follow it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgrag.api.facade import KGRag
from kgrag.server.jobs import record as job_record
from kgrag.server.jobs.queues import Job, Jobs
from kgrag.server.workspaces.pool import DEFAULT, Workspaces

from .served import make_settings

CHINESE = "李白是唐朝的诗人。李白在长安写诗。杜甫是李白的朋友，杜甫住在成都。"


async def _index_elsewhere(settings: Any) -> None:
    async with KGRag(settings) as rag:
        await rag.insert([CHINESE])


async def test_a_reader_follows_a_run_of_another_process(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "w")
    served = Workspaces(settings)
    try:
        before = await served.get(DEFAULT)
        assert before.settings.extraction.language == "English"
        await _index_elsewhere(settings)
        after = await served.get(DEFAULT)
        assert after is not before and after.settings.extraction.language == "Chinese"
        assert await served.get(DEFAULT) is after  # once followed, kept
    finally:
        await served.close()


async def test_a_writer_follows_before_its_next_job(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "w")
    served = Workspaces(settings)
    jobs = Jobs(served)

    async def language(rag: KGRag, job: Job) -> dict[str, Any]:
        return {"language": rag.settings.extraction.language}

    try:
        first = await jobs.submit(DEFAULT, "probe", "probe", language)
        assert (await first.outcome())["language"] == "English"
        await _index_elsewhere(settings)
        second = await jobs.submit(DEFAULT, "probe", "probe", language)
        assert (await second.outcome())["language"] == "Chinese"
    finally:
        await jobs.close()
        await served.close()


async def test_a_job_of_one_server_is_answered_by_another(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "w")
    one, other = Workspaces(settings), Workspaces(settings)
    jobs, other_jobs = Jobs(one), Jobs(other)

    async def quick(rag: KGRag, job: Job) -> dict[str, Any]:
        return {"message": "probed"}

    try:
        job = await jobs.submit(DEFAULT, "probe", "Probing", quick)
        reader = (await other.get(DEFAULT)).storage
        seen = await other_jobs.view(DEFAULT, reader, job.id, wait=30)
        assert seen is not None and seen["status"] == "succeeded"
        assert seen["result"] == {"message": "probed"}
        elsewhere = (await other.get("elsewhere")).storage
        assert await other_jobs.view("elsewhere", elsewhere, job.id) is None  # not its job
        listed = await other_jobs.recent(DEFAULT, reader, 10)
        assert [r["job_id"] for r in listed] == [job.id]
    finally:
        await jobs.close()
        await other_jobs.close()
        await one.close()
        await other.close()


def test_an_unfinished_record_left_by_a_stopped_process_reads_as_cancelled() -> None:
    record = {"job_id": "job-1", "status": "running", "seen_at": 1000.0, "error": None}
    assert job_record.shown(record, now=1000.0 + job_record.STALE_S - 1)["status"] == "running"
    lost = job_record.shown(record, now=1000.0 + job_record.STALE_S + 1)
    assert lost["status"] == "cancelled" and lost["error"] == job_record.LOST
    assert "seen_at" not in lost
    done = {**record, "status": "succeeded"}
    assert job_record.shown(done, now=1e12)["status"] == "succeeded"
