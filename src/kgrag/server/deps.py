"""FastAPI dependencies shared by every router: the caller and the request's workspace.

A request names its workspace by path prefix (``/w/NAME/...``, stripped by
:func:`kgrag.server.app.workspace_prefix`) or by header (``X-Workspace``,
or LightRAG's ``LIGHTRAG-WORKSPACE``); with neither it is the default
workspace. A caller asking for a workspace it may not use gets 403, never
a fallback to another one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from kgrag.api.facade import KGRag
from kgrag.server.access.auth import ANONYMOUS, Authenticator, Principal, credentials
from kgrag.server.workspaces.pool import DEFAULT, WorkspaceError, Workspaces

HEADERS = ("x-workspace", "lightrag-workspace")


@dataclass(slots=True)
class Workspace:
    """The workspace a request is for, its open index, and the caller."""

    name: str
    rag: KGRag
    principal: Principal


def workspaces(request: Request) -> Workspaces:
    """The app's :class:`Workspaces` (``create_app`` puts them on ``app.state``)."""
    served: Workspaces = request.app.state.workspaces
    return served


def authenticator(request: Request) -> Authenticator | None:
    """The app's authenticator; None when auth is off."""
    auth: Authenticator | None = request.app.state.auth
    return auth


def caller(request: Request) -> Principal:
    """The authenticated caller; 401 when auth is on and the credentials are missing or bad."""
    auth = authenticator(request)
    if auth is None:
        return ANONYMOUS
    checked: Principal | None = request.scope.get("kgrag_principal")
    if checked is not None:
        return checked  # the gate has authenticated this request
    given = credentials({k.lower(): v for k, v in request.headers.items()})
    principal = auth.authenticate(given) if given else None
    if principal is None:
        raise HTTPException(401, "missing or invalid credentials", {"WWW-Authenticate": "Bearer"})
    return principal


def workspace_name(request: Request) -> str:
    from_path = request.scope.get("kgrag_workspace")
    from_header = next((request.headers[h] for h in HEADERS if h in request.headers), None)
    if from_path and from_header and from_path != from_header:
        raise HTTPException(400, "the path and the header name different workspaces")
    return from_path or from_header or DEFAULT


async def workspace(
    request: Request, principal: Annotated[Principal, Depends(caller)]
) -> Workspace:
    """The request's workspace, open; 403 for a workspace the caller may not use."""
    name = workspace_name(request)
    if not principal.may_use(name):
        raise HTTPException(403, f"not allowed to use workspace {name!r}")
    try:
        rag = await workspaces(request).get(name)
    except WorkspaceError as exc:
        raise HTTPException(404 if "no workspace" in str(exc) else 400, str(exc)) from exc
    return Workspace(name, rag, principal)


CurrentWorkspace = Annotated[Workspace, Depends(workspace)]
Caller = Annotated[Principal, Depends(caller)]
