"""The app's route table and OpenAPI schema, pinned: every path and method, in order, and every shape.

``route_table.json`` and ``openapi.json`` were generated once from the app
as it was before the server's modules were regrouped (``create_app`` with
its routers mounted in two places); the routers are now mounted from one
list and the routes' helpers are typed, and neither may change: the same
kinds of route, paths and methods, in the same order (an earlier route wins
a path both match), and the same request and response schemas (a route's
return annotation is its response model in FastAPI, so typing one is seen
here). ``mcp_tools.json`` pins the MCP tools as ``tools/list`` gives them
(names, descriptions, input and output schemas), generated the same way.
Every router is mounted from one list, ``kgrag.server.app.ROUTERS``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import kgrag.server
from kgrag.server.app import ROUTERS, ServerOptions, create_app
from kgrag.server.compat.mcp_tools import build_mcp
from tests.support.settings import fake_settings

PINNED = Path(__file__).with_name("route_table.json")
SCHEMA = Path(__file__).with_name("openapi.json")
TOOLS = Path(__file__).with_name("mcp_tools.json")


def _rows(routes: Iterable[Any]) -> Iterator[list[Any]]:
    """``[kind, path, methods]`` per route; an included router is opened into its routes."""
    for route in routes:
        contexts = getattr(route, "effective_route_contexts", None)
        if contexts is None:  # FastAPI before 0.165 keeps the routes flat
            yield [type(route).__name__, route.path, sorted(getattr(route, "methods", ()) or ())]
            continue
        for context in contexts():
            effective = context.starlette_route or context
            methods = sorted(getattr(effective, "methods", ()) or ())
            yield [type(context.original_route).__name__, effective.path, methods]


def test_the_route_table_is_the_pinned_one(tmp_path: Path) -> None:
    app = create_app(ServerOptions(fake_settings(tmp_path)))
    assert list(_rows(app.routes)) == json.loads(PINNED.read_text())


def test_no_path_and_method_is_served_twice(tmp_path: Path) -> None:
    app = create_app(ServerOptions(fake_settings(tmp_path)))
    pairs = [(path, method) for _, path, methods in _rows(app.routes) for method in methods]
    assert len(pairs) == len(set(pairs))


def test_the_openapi_schema_is_the_pinned_one(tmp_path: Path) -> None:
    app = create_app(ServerOptions(fake_settings(tmp_path)))
    assert app.openapi() == json.loads(SCHEMA.read_text())


def test_the_mcp_tool_list_is_the_pinned_one() -> None:
    async def no_index(ctx: Any) -> Any:
        raise AssertionError("listing the tools opens no index")

    tools = asyncio.run(build_mcp(no_index).list_tools())
    assert [t.model_dump(mode="json") for t in tools] == json.loads(TOOLS.read_text())


def test_routers_are_mounted_in_one_place() -> None:
    package = Path(kgrag.server.__file__).parent
    mounting = sorted(
        str(f.relative_to(package))
        for f in package.rglob("*.py")
        if "include_router(" in f.read_text(encoding="utf-8")
    )
    assert mounting == ["app.py"]
    assert len(set(map(id, ROUTERS))) == len(ROUTERS)
