"""Apply a resolution report through the curation merge, and the ``resolve=auto`` hook.

Each group becomes one recorded merge (origin ``dedupe``, its links as
the evidence), all of them in one change (:meth:`~kgrag.KGRag.merge_groups`:
one recompute, one transaction), so it lasts through re-indexing and ``kgrag unmerge`` can
take it back. A group whose names changed since the report was made is
merged as far as its names still exist; one left with no source is skipped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgrag.curation.resolution.report import ResolutionReport

if TYPE_CHECKING:
    from kgrag.api.facade import KGRag


async def apply_groups(rag: KGRag, report: ResolutionReport) -> list[str]:
    """Merge every group of ``report`` in one change; returns the merge ids (also on the report)."""
    graph = rag.storage.graph
    groups: list[tuple[str, list[str]]] = []
    evidence: list[dict[str, Any] | None] = []
    for group in report.groups:
        present = await graph.get_nodes(group.names)
        members = [m for m in group.members if m in present]
        if group.target not in present or not members:
            continue
        groups.append((group.target, members))
        evidence.append(
            {"score": round(group.score, 3), "links": [p.to_dict() for p in group.links]}
        )
    if groups:
        report.merges.extend(await rag.merge_groups(groups, evidence=evidence, origin="dedupe"))
    return report.merges


async def auto_resolve(rag: KGRag) -> ResolutionReport | None:
    """With ``resolve=auto``: merge the groups above the auto threshold (after an index run)."""
    settings = rag.settings
    if settings.resolution.mode != "auto":
        return None
    return await rag.resolve_entities(min_score=settings.resolution.auto_min_score, apply=True)
