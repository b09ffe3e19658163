"""``/docs``: the OpenAPI page, served with vendored Swagger UI (nothing from a CDN).

The assets are swagger-ui-dist's (Apache-2.0, licence beside them in
``static/docs/``); the page loads them and ``init.js`` from this server
only, as the Content-Security-Policy demands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse

router = APIRouter(include_in_schema=False)

STATIC = Path(__file__).resolve().parent.parent / "static" / "docs"
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "init.js": "text/javascript",
}
PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>kgrag API</title>
<link rel="stylesheet" href="{root}/docs/static/swagger-ui.css">
</head>
<body data-spec="{root}/openapi.json">
<div id="swagger-ui"></div>
<script src="{root}/docs/static/swagger-ui-bundle.js"></script>
<script src="{root}/docs/static/init.js"></script>
</body>
</html>
"""


@router.get("/docs")
async def docs_page(request: Request) -> HTMLResponse:
    root = request.scope.get("root_path", "").rstrip("/")
    return HTMLResponse(PAGE.format(root=root))


@router.get("/docs/static/{name}")
async def docs_asset(name: str) -> FileResponse:
    if name not in ASSETS:
        raise HTTPException(404, "not found")
    return FileResponse(
        STATIC / name, media_type=ASSETS[name], headers={"cache-control": "public, max-age=86400"}
    )


SCHEMES = {
    "APIKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
    "Bearer": {"type": "http", "scheme": "bearer", "description": "an API key or a /login token"},
}


def describe_auth(app: FastAPI) -> None:
    """Name the credentials in the schema, so that the page's Authorize button can send them."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        schema = build()
        if app.state.auth is not None and "security" not in schema:
            schema.setdefault("components", {})["securitySchemes"] = SCHEMES
            schema["security"] = [{"APIKey": []}, {"Bearer": []}]
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
