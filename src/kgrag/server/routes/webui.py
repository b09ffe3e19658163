"""``/webui/``: the browser interface, static files served by this process (``/`` leads there).

The files live in ``kgrag/server/ui/`` (plain HTML, CSS and ES modules, no
build step; cytoscape.js vendored under ``vendor/``). They are public, as
the gate says: they hold no data, and every call they make to the API
carries the key or token the user gives. Only files found there when the
module loads are served, by name, so no path reaches elsewhere. Under a
``/w/NAME/`` prefix the page talks to that workspace.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, RedirectResponse

router = APIRouter(include_in_schema=False)

UI = Path(__file__).resolve().parent.parent / "ui"
MEDIA = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    "": "text/plain; charset=utf-8",  # the vendored licence
}
REVALIDATE = {"cache-control": "no-cache"}  # cached, but checked: a new version shows at once


def _files(folder: Path) -> dict[str, Path]:
    """Every servable file under ``folder`` by its relative POSIX path."""
    return {
        p.relative_to(folder).as_posix(): p
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.suffix in MEDIA and "__pycache__" not in p.parts
    }


FILES = _files(UI)


def _home(request: Request) -> str:
    """The UI's address for this request (inside the workspace prefix, if any)."""
    root = request.scope.get("root_path", "").rstrip("/")
    name = request.scope.get("kgrag_workspace")
    return f"{root}/w/{name}/webui/" if name else f"{root}/webui/"


@router.get("/")
async def root(request: Request) -> RedirectResponse:
    return RedirectResponse(_home(request), status_code=307)


@router.get("/webui")
async def webui_bare(request: Request) -> RedirectResponse:
    return RedirectResponse(_home(request), status_code=307)


@router.get("/webui/")
async def index() -> FileResponse:
    return _serve("index.html")


@router.get("/webui/{name:path}")
async def asset(name: str) -> FileResponse:
    return _serve(name)


def _serve(name: str) -> FileResponse:
    path = FILES.get(name)
    if path is None:
        raise HTTPException(404, "not found")
    return FileResponse(path, media_type=MEDIA[path.suffix], headers=REVALIDATE)
