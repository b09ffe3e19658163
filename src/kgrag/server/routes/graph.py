"""``/graph`` and ``/graphs``: LightRAG's label and subgraph routes, and kgrag's export.

Reads go through the workspace's shared instance (committed state).
The editing routes are :mod:`.graph_edit`, kgrag's curation routes
:mod:`.graph_curate` (mounted after these, by :data:`kgrag.server.app.ROUTERS`).
"""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Literal

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse
from starlette.background import BackgroundTask

from kgrag.server.deps import CurrentWorkspace
from kgrag.server.views import JSONObject
from kgrag.server.views import graph as views

router = APIRouter(tags=["graph"])

MEDIA = {
    "json": "application/json",
    "graphml": "application/xml",
    "md": "text/markdown; charset=utf-8",
    "csv": "application/zip",
    "parquet": "application/zip",
}


@router.get("/graph/label/list")
async def labels(ws: CurrentWorkspace) -> list[str]:
    """Every entity name, sorted."""
    return sorted(await ws.rag.storage.graph.all_node_names())


@router.get("/graph/label/popular")
async def popular_labels(ws: CurrentWorkspace, limit: int = Query(300, ge=1, le=1000)) -> list[str]:
    """Entity names by degree, highest first."""
    return await views.popular(ws.rag.storage.graph, limit)


@router.get("/graph/label/search")
async def search_labels(
    ws: CurrentWorkspace, q: str = Query(..., max_length=1000), limit: int = Query(50, ge=1, le=100)
) -> list[str]:
    """Entity names matching ``q``: exact, prefix, substring, then close spellings."""
    return views.search(await ws.rag.storage.graph.all_node_names(), q, limit)


@router.get("/graphs", response_model=JSONObject)
async def graphs(
    ws: CurrentWorkspace,
    label: str = Query(..., max_length=1000),
    max_depth: int = Query(3, ge=1, le=10),
    max_nodes: int = Query(1000, ge=1, le=100_000),
) -> views.Subgraph:
    """The subgraph around ``label`` (``*``: the best connected nodes of the whole graph)."""
    return await views.subgraph(ws.rag.storage.graph, label, max_depth, max_nodes)


@router.get("/graph/entity/exists")
async def entity_exists(
    ws: CurrentWorkspace, name: str = Query(..., max_length=1000)
) -> dict[str, bool]:
    return {"exists": await ws.rag.storage.graph.get_node(name) is not None}


def _zip(folder: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return target


@router.get("/graph/export")
async def export(
    ws: CurrentWorkspace,
    format: Literal["json", "csv", "graphml", "md", "parquet"] = "json",
    timestamps: bool = True,
) -> FileResponse:
    """The whole graph as a file download (csv and parquet: a zip of the tables)."""
    tmp = Path(tempfile.mkdtemp(prefix="kgrag-export-"))
    cleanup = BackgroundTask(shutil.rmtree, tmp, ignore_errors=True)
    try:
        folder = format in ("csv", "parquet")
        target = tmp / ("tables" if folder else f"graph.{format}")
        await ws.rag.export_to(target, format=format, timestamps=timestamps)
        path = _zip(target, tmp / f"graph-{format}.zip") if folder else target
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return FileResponse(path, media_type=MEDIA[format], filename=path.name, background=cleanup)
