"""kgrag's curation routes: the dedupe report, applying groups of it, merges and unmerge.

``GET /graph/dedupe`` finds names for one thing and writes nothing (the
report of ``kgrag dedupe``: groups with their evidence, near misses,
homonyms); ``POST /graph/dedupe/apply`` merges the groups the client
accepts (each ``{target, members}``, as the report lists them), recorded
with origin ``dedupe``; ``GET /graph/merges`` lists the recorded merges and
``POST /graph/unmerge`` undoes one. Writes take their turn in the job queue.
"""

from __future__ import annotations

from typing import Annotated, TypedDict

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field, StringConstraints

from kgrag.api.facade import KGRag
from kgrag.server.deps import CurrentWorkspace
from kgrag.server.jobs.queues import CurrentJobs, run_in_queue
from kgrag.server.views import JSONObject

router = APIRouter(prefix="/graph", tags=["graph"])

Name = Annotated[str, StringConstraints(min_length=1, max_length=1000)]


@router.get("/dedupe")
async def dedupe_report(
    ws: CurrentWorkspace,
    min_score: float | None = Query(None, ge=0.0, le=1.0),
    llm: bool = Query(False, description="ask the chat model about undecided pairs"),
) -> JSONObject:
    """The duplicate report; nothing is merged."""
    report = await ws.rag.resolve_entities(min_score=min_score, apply=False, use_llm=llm)
    return report.to_dict()


class Group(BaseModel):
    target: Name
    members: list[Name] = Field(min_length=1, max_length=1000)
    evidence: JSONObject | None = None


class Merged(TypedDict):
    merges: list[str]  # the merge ids, one per group


class AcceptGroups(BaseModel):
    groups: list[Group] = Field(min_length=1, max_length=100_000)


@router.post("/dedupe/apply")
async def dedupe_apply(body: AcceptGroups, ws: CurrentWorkspace, jobs: CurrentJobs) -> JSONObject:
    """Merge the accepted groups in one change; the merge ids, one per group."""
    groups = [(g.target, list(g.members)) for g in body.groups]
    evidence: list[JSONObject | None] = [
        g.evidence or {"accepted": "dedupe report"} for g in body.groups
    ]

    async def act(rag: KGRag) -> Merged:
        return {"merges": await rag.merge_groups(groups, evidence=evidence, origin="dedupe")}

    done = await run_in_queue(jobs, ws.name, f"Merging {len(groups)} duplicate group(s)", act)
    return {"status": "success", "message": f"{len(done['merges'])} group(s) merged", **done}


@router.get("/merges")
async def merges(ws: CurrentWorkspace) -> JSONObject:
    """Recorded merges, oldest first: id, target, sources, origin, evidence, created_at."""
    return {"merges": await ws.rag.merges()}


class Unmerge(BaseModel):
    merge_id: Name


@router.post("/unmerge")
async def unmerge(body: Unmerge, ws: CurrentWorkspace, jobs: CurrentJobs) -> JSONObject:
    async def act(rag: KGRag) -> JSONObject:
        await rag.unmerge(body.merge_id)
        return {}

    await run_in_queue(jobs, ws.name, f"Undoing merge {body.merge_id}", act)
    return {"status": "success", "message": f"Merge {body.merge_id} undone"}
