"""LightRAG's routes (documents, query, graph) with kgrag's own beside them, as one unit.

:func:`install` mounts the routers, puts the workspaces' job queues on
``app.state.jobs`` (:mod:`kgrag.server.jobs.queues`) and registers the handler
mapping kgrag's errors to HTTP statuses (:mod:`kgrag.server.routes.errors`);
:func:`close` stops the queues and closes their writers at shutdown,
before the workspaces close.
"""

from __future__ import annotations

from fastapi import FastAPI

from kgrag.server.jobs.queues import Jobs
from kgrag.server.routes import documents, errors, graph, query

ROUTERS = (documents.router, query.router, graph.router)


def install(app: FastAPI) -> None:
    """Mount the routes on ``app`` (its ``state.workspaces`` must be set)."""
    app.state.jobs = Jobs(app.state.workspaces)
    errors.install(app)
    for router in ROUTERS:
        app.include_router(router)


async def close(app: FastAPI) -> None:
    """Stop every job queue (a running job is cancelled) and close the writers."""
    await app.state.jobs.close()
